"""AD155: a `with torch.no_grad():` block whose only statements give existing tensors new names
(held-out set 13's DReG estimator, `mu_stop, logvar_stop = mu, logvar` under no_grad). The names are
the same tensors with their history, so the "stop" stops nothing and the gradient is the one it
meant to remove. Here on a program of its own (a target network's output meant as a fixed target):
the with block is named, the help detaches the values, and the changed program trains as the answer
does; silent when the block computes something or the names hold no tensor that requires grad."""

import torch

from helpers import apply_help, run_plain, run_program

TARGET = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(3, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)


def loss_towards_own_prediction(out):
    with torch.no_grad():  # BLOCK
        target = out
    return (out - 0.5 * (target + y)).pow(2).mean()


for step in range(3):
    loss = loss_towards_own_prediction(net(x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in net.parameters()]
"""

ANSWER = TARGET.replace("    with torch.no_grad():  # BLOCK\n        target = out\n", "    target = out.detach()\n")


def test_the_renaming_block_is_named_and_the_values_detached(tmp_path):
    outcome = run_program(tmp_path, TARGET)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD155")
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("BLOCK")
    assert any(location.line == outcome.line("STEP") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "target = out.detach()"
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    buggy = run_plain(tmp_path, TARGET, name="buggy.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))  # the stop matters here


def test_silent_when_the_block_computes_or_renames_no_tensor_in_the_graph(tmp_path):
    computed = TARGET.replace("        target = out\n", "        target = out * 1.0\n")
    assert not [d for d in run_program(tmp_path, computed, name="computed.py").diagnoses if d.code == "AD155"]
    constant = TARGET.replace("        target = out\n", "        target = y\n")
    assert not [d for d in run_program(tmp_path, constant, name="constant.py").diagnoses if d.code == "AD155"]
    assert not [d for d in run_program(tmp_path, ANSWER, name="answer.py").diagnoses if d.code == "AD155"]
