"""AD154: L-BFGS was given a closure that runs no backward() (`optimizer.step(lambda: loss)` after
computing and backpropagating the loss outside it): every evaluation of the closure returns the
same loss and leaves the same gradients, so the search stops early or follows stale gradients,
and nothing fails. Found when the doctor stops (held-out set 13, fitgabor#1: undiagnosed on the
first run). This program is another one: a logistic regression fitted with L-BFGS."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

PRECOMPUTED = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(40, 3)
y = (x @ torch.tensor([1.5, -2.0, 0.5]) > 0).float()
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.LBFGS([w, b], lr=0.5, max_iter=10)
for it in range(3):
    optimizer.zero_grad()  # FIRST
    loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
    loss.backward()
    optimizer.step(lambda: loss)  # STEP
result = [w.detach().clone(), b.detach().clone()]
"""

# The help applied: the closure computes the loss and its gradients at each evaluation.
ADVICE_APPLIED = PRECOMPUTED.replace("""    optimizer.zero_grad()  # FIRST
    loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
    loss.backward()
    optimizer.step(lambda: loss)  # STEP
""", """    def closure():
        optimizer.zero_grad()  # FIRST
        loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
        loss.backward()
        return loss
    loss = optimizer.step(closure)  # STEP
""")

# The same fit written the way torch.optim's documentation writes a closure: what the program means.
REFERENCE = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(40, 3)
y = (x @ torch.tensor([1.5, -2.0, 0.5]) > 0).float()
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.LBFGS([w, b], lr=0.5, max_iter=10)
def closure():
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
    loss.backward()
    return loss
for it in range(3):
    optimizer.step(closure)
result = [w.detach().clone(), b.detach().clone()]
"""


def test_the_step_call_is_named_with_the_closure(tmp_path):
    outcome = run_program(tmp_path, PRECOMPUTED)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD154"]
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("STEP")
    assert diagnosis.primary.note == "L-BFGS calls the closure again at each trial point; this one runs no backward()"
    assert [r.line for r in diagnosis.related] == [outcome.line("STEP")]  # the lambda is on that line
    (help_,) = diagnosis.help
    assert help_.message == ("compute `loss` inside the closure, with its backward(): L-BFGS then evaluates the "
                             "loss and its gradients at each trial point; the step returns the first evaluation's loss")
    assert (help_.location.line, help_.location.end_line) == (outcome.line("FIRST"), outcome.line("STEP"))
    assert apply_replacement(PRECOMPUTED, help_.location, help_.replacement) == ADVICE_APPLIED


# fitgabor's form: a `def closure(): return loss` between the loss and the step, the gradients
# cleared at the top of the loop, out of the closure's reach, and the loss logged after the step.
DEFINED_CLOSURE = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(40, 3)
y = (x @ torch.tensor([1.5, -2.0, 0.5]) > 0).float()
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.LBFGS([w, b], lr=0.5, max_iter=10)
losses = []
for it in range(3):
    optimizer.zero_grad()
    print("iteration", it)
    logits = x @ w + b
    loss = F.binary_cross_entropy_with_logits(logits, y)  # FIRST
    loss.backward()

    def closure():
        return loss

    optimizer.step(closure)  # STEP
    losses.append(loss.item())
result = [w.detach().clone(), b.detach().clone()]
"""


def test_a_defined_closure_gets_the_statements_that_compute_its_loss(tmp_path):
    outcome = run_program(tmp_path, DEFINED_CLOSURE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD154"]
    (help_,) = diagnosis.help
    assert (help_.location.line, help_.location.end_line) == (outcome.line("FIRST") - 1, outcome.line("STEP"))
    fixed = apply_replacement(DEFINED_CLOSURE, help_.location, help_.replacement)
    assert """    def closure():
        optimizer.zero_grad()
        logits = x @ w + b
        loss = F.binary_cross_entropy_with_logits(logits, y)  # FIRST
        loss.backward()
        return loss
    loss = optimizer.step(closure)  # STEP
    losses.append(loss.item())
""" in fixed
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, c, rtol=1e-5, atol=1e-6)
               for a, c in zip(run_plain(tmp_path, fixed, name="fixed.py")["result"], reference))


def test_the_advice_applied_fits_as_the_reference_does(tmp_path):
    fixed = run_plain(tmp_path, ADVICE_APPLIED)["result"]
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, c, rtol=1e-5, atol=1e-6) for a, c in zip(fixed, reference))
    buggy = run_plain(tmp_path, PRECOMPUTED, name="plain.py")["result"]
    assert not all(torch.allclose(a, c, rtol=1e-5, atol=1e-6) for a, c in zip(buggy, reference))
    assert not [d for d in run_program(tmp_path, ADVICE_APPLIED).diagnoses if d.code == "AD154"]


SILENT = {
    "a closure that sets the gradients with autograd.grad": PRECOMPUTED.replace("""    optimizer.zero_grad()  # FIRST
    loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
    loss.backward()
    optimizer.step(lambda: loss)  # STEP
""", """    def closure():
        loss = F.binary_cross_entropy_with_logits(x @ w + b, y)
        w.grad, b.grad = torch.autograd.grad(loss, [w, b])
        return loss
    optimizer.step(closure)
"""),
    "L-BFGS allowed one evaluation per step": PRECOMPUTED.replace("max_iter=10", "max_iter=1"),
    "Adam, which evaluates a closure once, at the start of its step": PRECOMPUTED.replace(
        "torch.optim.LBFGS([w, b], lr=0.5, max_iter=10)", "torch.optim.Adam([w, b], lr=0.1)"),
}


def test_closures_that_compute_their_gradients_are_silent(tmp_path):
    for name, source in SILENT.items():
        outcome = run_program(tmp_path, source)
        assert outcome.error is None, name
        assert not [d for d in outcome.diagnoses if d.code == "AD154"], name
