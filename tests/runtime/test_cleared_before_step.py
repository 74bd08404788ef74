"""AD153: a zero_grad() at every micro-batch of a gradient-accumulation window clears what the
earlier micro-batches computed before the step that should apply it; each step trains on the last
micro-batch alone, and nothing fails. Found when the doctor stops, from the backward() sites whose
gradients a zero_grad() cleared before any step at least twice and at least as often as a step
applied them (held-out set 13, SimCSE_unsupervised#1: undiagnosed on the first run). This program
is another one: a bag-of-embeddings text classifier accumulating over three micro-batches."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

ACCUMULATING = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
embed = nn.EmbeddingBag(30, 8)
classify = nn.Linear(8, 2)
params = [*embed.parameters(), *classify.parameters()]
optimizer = torch.optim.SGD(params, lr=0.5)
batches = [(torch.randint(0, 30, (4, 5)), torch.randint(0, 2, (4,))) for _ in range(9)]
for i, (tokens, labels) in enumerate(batches):
    optimizer.zero_grad()  # CLEAR
    loss = F.cross_entropy(classify(embed(tokens)), labels) / 3
    loss.backward()  # BACKWARD
    if (i + 1) % 3 == 0:
        optimizer.step()  # STEP
result = [p.detach().clone() for p in params]
"""

# The help applied: the gradients are cleared after the step that applies them.
ADVICE_APPLIED = ACCUMULATING.replace("    optimizer.zero_grad()  # CLEAR\n", "").replace(
    "        optimizer.step()  # STEP\n", "        optimizer.step()  # STEP\n        optimizer.zero_grad()\n")

# What the program means, computed without accumulating in .grad: each step applies the sum of
# its window's gradients (torch.autograd.grad per micro-batch).
REFERENCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
embed = nn.EmbeddingBag(30, 8)
classify = nn.Linear(8, 2)
params = [*embed.parameters(), *classify.parameters()]
batches = [(torch.randint(0, 30, (4, 5)), torch.randint(0, 2, (4,))) for _ in range(9)]
window = [torch.zeros_like(p) for p in params]
for i, (tokens, labels) in enumerate(batches):
    loss = F.cross_entropy(classify(embed(tokens)), labels) / 3
    window = [w + g for w, g in zip(window, torch.autograd.grad(loss, params))]
    if (i + 1) % 3 == 0:
        with torch.no_grad():
            for p, g in zip(params, window):
                p -= 0.5 * g
        window = [torch.zeros_like(p) for p in params]
result = [p.detach().clone() for p in params]
"""


def test_the_zero_grad_is_named_with_the_backward_it_clears(tmp_path):
    outcome = run_program(tmp_path, ACCUMULATING)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("CLEAR")
    assert diagnosis.primary.note == "clears gradients that step() has not applied yet"
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert diagnosis.related[0].note == "its gradients were cleared before a step 6 times, applied by a step 3 times"
    assert diagnosis.help[0].message == ("clear the gradients only after step() has applied them: "
                                         f"move this zero_grad() right after the step() on line {outcome.line('STEP')}")
    # The change spans the lines from the zero_grad() to the step(): the text between them stays.
    assert (diagnosis.help[0].location.line, diagnosis.help[0].location.end_line) == (outcome.line("CLEAR"),
                                                                                     outcome.line("STEP"))
    assert apply_replacement(ACCUMULATING, diagnosis.help[0].location, diagnosis.help[0].replacement) == ADVICE_APPLIED


def test_the_advice_applied_trains_as_the_reference_does(tmp_path):
    fixed = run_plain(tmp_path, ADVICE_APPLIED)["result"]
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(fixed, reference))
    buggy = run_plain(tmp_path, ACCUMULATING, name="plain.py")["result"]
    assert not all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(buggy, reference))
    assert not [d for d in run_program(tmp_path, ADVICE_APPLIED).diagnoses if d.code == "AD153"]


# The same loop where a module's zero_grad() already follows the step (SimCSE's form): the first
# zero_grad() has only to go. A GAN's other optimizer cleared after the step would not do.
CLEARED_AFTER_STEP = ACCUMULATING.replace(
    "        optimizer.step()  # STEP\n", "        optimizer.step()  # STEP\n        classify.zero_grad()\n        embed.zero_grad()\n")
OTHER_OPTIMIZER_CLEARED = ACCUMULATING.replace(
    "optimizer = torch.optim.SGD(params, lr=0.5)\n",
    "optimizer = torch.optim.SGD(params, lr=0.5)\nside = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)\n",
).replace("        optimizer.step()  # STEP\n", "        optimizer.step()  # STEP\n        side.step()\n        side.zero_grad()\n")


def test_a_zero_grad_already_after_the_step_leaves_this_one_to_delete(tmp_path):
    outcome = run_program(tmp_path, CLEARED_AFTER_STEP)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    (help_,) = diagnosis.help
    assert help_.message == ("clear the gradients only after step() has applied them: delete this zero_grad(); "
                             f"the one after the step() on line {outcome.line('STEP')} already clears them")
    fixed = apply_replacement(CLEARED_AFTER_STEP, help_.location, help_.replacement)
    assert fixed == CLEARED_AFTER_STEP.replace("    optimizer.zero_grad()  # CLEAR\n", "")
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7)
               for a, b in zip(run_plain(tmp_path, fixed, name="fixed.py")["result"], reference))


def test_another_optimizers_zero_grad_after_the_step_does_not_count(tmp_path):
    outcome = run_program(tmp_path, OTHER_OPTIMIZER_CLEARED)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    assert "move this zero_grad() right after the step()" in diagnosis.help[0].message
    fixed = apply_replacement(OTHER_OPTIMIZER_CLEARED, diagnosis.help[0].location, diagnosis.help[0].replacement)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7)
               for a, b in zip(run_plain(tmp_path, fixed, name="fixed.py")["result"][:4], reference))


SILENT = {
    "the last, incomplete window of each epoch is dropped at the next epoch's zero_grad()": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(7)]
for epoch in range(3):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        (F.mse_loss(model(x), y) / 3).backward()
        if (i + 1) % 3 == 0:
            optimizer.step()
            optimizer.zero_grad()
result = [p.detach().clone() for p in model.parameters()]
""",
    "a GAN whose discriminator loss reaches the generator, cleared by the generator's zero_grad()": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
G, D = nn.Linear(2, 3), nn.Linear(3, 1)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
def update(optimizer, loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
for it in range(4):
    real, fake = torch.randn(5, 3), G(torch.randn(5, 2))
    d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
    update(opt_d, d_loss)
    update(opt_g, F.softplus(-D(G(torch.randn(5, 2)))).mean())
result = [p.detach().clone() for p in [*G.parameters(), *D.parameters()]]
""",
    "L-BFGS, whose closure clears the gradients inside step()": """
import torch
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))
optimizer = torch.optim.LBFGS([w], max_iter=5)
target = torch.tensor([1.0, -2.0, 0.5])
def closure():
    optimizer.zero_grad()
    loss = ((w - target) ** 2).sum()
    loss.backward()
    return loss
for _ in range(3):
    optimizer.step(closure)
result = [w.detach().clone()]
""",
    "a gradient norm logged from a separate backward() that is always cleared": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
norms = []
for it in range(4):
    x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
    F.cross_entropy(model(x[:3]), y[:3]).backward()
    norms.append(model.weight.grad.norm())
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
""",
}


def test_correct_clearing_is_silent(tmp_path):
    for name, source in SILENT.items():
        outcome = run_program(tmp_path, source)
        assert outcome.error is None, name
        assert not [d for d in outcome.diagnoses if d.code == "AD153"], name
