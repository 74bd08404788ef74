"""Two writes whose usual help did not fit (held-out set 13): an in-place method on a tensor the
expression has just made (TorchOpt's `v.add(eps_root).sqrt_().add_(eps)`, AD101), whose help is the
out-of-place twin of that method, not a copy of a name; and a constant written into an input that
requires grad inside the function it is passed to (DeepONet's `x *= 2 * np.pi`, AD102), whose help
is a copy made inside the function, not torch.no_grad(), which would change the caller's tensor at
every call. Each on a program of its own, with the help applied computing what the answer does."""

import torch

from helpers import apply_help, run_plain, run_program

RMS_UPDATE = """
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
g = torch.randn(4)
square = (w * g) ** 2
step = g / square.mul(0.9).sqrt_().add_(1e-8)  # WRITE
loss = (w * step).sum()
loss.backward()
grad = w.grad.clone()
"""

INPUT_SCALED = """
import numpy as np
import torch
torch.manual_seed(0)
net = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
grid = np.linspace(0, 1, 9, dtype=np.float32).reshape(3, 3)

def scaled(x):
    x *= 2.0  # WRITE
    return torch.sin(x)

for step in range(3):
    inputs = torch.as_tensor(grid).requires_grad_()
    out = net(scaled(inputs))
    slope = torch.autograd.grad(out.sum(), inputs, create_graph=True)[0]
    loss = out.pow(2).mean() + slope.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in net.parameters()]
"""


def test_a_write_into_a_temporary_gets_its_out_of_place_twin(tmp_path):
    outcome = run_program(tmp_path, RMS_UPDATE)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD101")
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].message.startswith("write out of place: add_() writes into a tensor this expression")
    assert diagnosis.help[0].replacement.strip().startswith("step = g / square.mul(0.9).sqrt_().add(1e-8)")
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["grad"]
    answer = run_plain(tmp_path, RMS_UPDATE.replace(".sqrt_().add_(1e-8)", ".sqrt().add(1e-8)"), name="answer.py")
    assert torch.equal(fixed, answer["grad"])


def test_a_view_is_not_taken_for_a_temporary(tmp_path):
    # `w.view(-1)` shares w's memory: writing into it out of place would no longer change w.
    from autograd_doctor.analysis.fixes import _fresh_temporary
    import ast

    assert _fresh_temporary(ast.parse("v.add(e).sqrt_()", mode="eval").body)
    assert not _fresh_temporary(ast.parse("v.view(-1).sqrt_()", mode="eval").body)
    assert not _fresh_temporary(ast.parse("v.contiguous()", mode="eval").body)
    assert not _fresh_temporary(ast.parse("v", mode="eval").body)


def test_an_input_leaf_is_copied_inside_the_function(tmp_path):
    outcome = run_program(tmp_path, INPUT_SCALED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD102")
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert any("is an input, not something trained" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.split("\n")[0].strip() == "x = x.clone()"
    assert diagnosis.help[1].replacement is None  # no_grad is advice only here
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, INPUT_SCALED.replace("    x *= 2.0  # WRITE\n", "    x = x * 2.0\n"), name="answer.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer["params"]))


def test_a_trained_leaf_keeps_the_no_grad_help(tmp_path):
    # The same write into a tensor the optimizer holds is a manual update or an initialisation.
    trained = INPUT_SCALED.replace("optimizer = torch.optim.SGD(net.parameters(), lr=0.1)",
                                   "scale = torch.ones(3, 3, requires_grad=True)\n"
                                   "optimizer = torch.optim.SGD([*net.parameters(), scale], lr=0.1)")
    trained = trained.replace("out = net(scaled(inputs))", "out = net(scaled(scale))")
    outcome = run_program(tmp_path, trained, name="trained.py")
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD102")
    assert diagnosis.help[0].replacement.startswith("with torch.no_grad():")
