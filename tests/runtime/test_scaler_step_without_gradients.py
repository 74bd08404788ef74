"""AD167: `scaler.step(optimizer)` raises "No inf checks were recorded for this optimizer" when no
parameter of the optimizer has a gradient. The cause named is the new leaf the loss started
from, a number wrapped back into `torch.tensor(value, requires_grad=True)` after a computation
outside torch (held-out set 18, accelerate#328, undiagnosed on the first run). The help is
advice: what replaces the NumPy computation is the user's."""

import torch

from helpers import run_as_script, run_plain, run_program

NUMPY_LOSS = """
import numpy as np
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)
x, target = torch.rand(8, 3), torch.rand(8, 4)

def colour_distance(predicted, wanted):
    value = float(np.sqrt(((predicted - wanted) ** 2).sum(-1)).mean())
    return torch.tensor(value, requires_grad=True)  # MADE

for step in range(2):
    optimizer.zero_grad()
    loss = colour_distance(model(x).detach().numpy(), target.numpy())
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # STEP
    scaler.update()
params = [p.detach().clone() for p in model.parameters()]
"""

TORCH_LOSS = NUMPY_LOSS.replace(
    "    value = float(np.sqrt(((predicted - wanted) ** 2).sum(-1)).mean())\n"
    "    return torch.tensor(value, requires_grad=True)  # MADE\n",
    "    return torch.sqrt(((predicted - wanted) ** 2).sum(-1)).mean()\n",
).replace("colour_distance(model(x).detach().numpy(), target.numpy())", "colour_distance(model(x), target)")


def test_the_new_leaf_is_named_and_the_step_shown(tmp_path):
    outcome = run_as_script(tmp_path, NUMPY_LOSS)
    assert isinstance(outcome.error, AssertionError)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD167")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert any(r.line == outcome.line("STEP") for r in diagnosis.related)
    assert "torch operations on the model's output" in diagnosis.help[0].message
    assert diagnosis.help[0].replacement is None  # advice: the computation to write is the user's


def test_the_advice_followed_trains_and_is_silent(tmp_path):
    outcome = run_program(tmp_path, TORCH_LOSS)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD167"]
    torch.manual_seed(0)
    before = [p.detach().clone() for p in torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid()).parameters()]
    after = run_plain(tmp_path, TORCH_LOSS, name="answer.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(before, after))  # the parameters moved


def test_a_loss_of_another_model_is_named_at_the_step(tmp_path):
    source = NUMPY_LOSS.replace("    scaler.scale(loss).backward()\n",
                                "    scaler.scale(other(x).pow(2).mean()).backward()\n").replace(
        "x, target = torch.rand(8, 3), torch.rand(8, 4)\n",
        "x, target = torch.rand(8, 3), torch.rand(8, 4)\nother = torch.nn.Linear(3, 4)\n").replace(
        "    return torch.tensor(value, requires_grad=True)  # MADE\n", "    return value\n")
    outcome = run_as_script(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD167")
    assert diagnosis.primary.line == outcome.line("STEP")
    assert diagnosis.help[0].replacement is None
