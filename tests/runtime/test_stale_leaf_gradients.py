"""AD218: gradient descent written out by hand without clearing `.grad`. Each program is
reported at its backward() line, the help applied as printed gives what the program clearing
its gradients computes, and updates made through an optimizer (AD209's) or gradients summed on
purpose over an input that does not change are not AD218 (test_false_alarm_patterns.py)."""

import pytest
import torch

from helpers import apply_help, run_plain, run_program

ATTACK = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
delta = torch.zeros_like(x, requires_grad=True)
for _ in range(4):
    loss = nn.functional.cross_entropy(model(x + delta), y)
    loss.backward()  # BACKWARD
    delta.data = (delta + 0.05 * delta.grad.sign()).clamp(-0.2, 0.2).data
result = [delta.detach().clone()]
"""

MODEL_BY_HAND = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
x, y = torch.randn(16, 3), torch.randn(16, 1)
for _ in range(5):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()  # BACKWARD
    for p in model.parameters():
        p.data -= 0.1 * p.grad
result = [p.detach().clone() for p in model.parameters()]
"""

CLEARED = {
    "attack": ATTACK.replace("    delta.data = (delta + 0.05 * delta.grad.sign()).clamp(-0.2, 0.2).data\n",
                             "    delta.data = (delta + 0.05 * delta.grad.sign()).clamp(-0.2, 0.2).data\n"
                             "    delta.grad.zero_()\n"),
    "model": MODEL_BY_HAND.replace("        p.data -= 0.1 * p.grad\n", "        p.data -= 0.1 * p.grad\n"
                                   "        p.grad.zero_()\n"),
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name, program, first_line", [
    ("attack", ATTACK, "delta.grad = None"),
    ("model", MODEL_BY_HAND, "model.zero_grad()"),
])
def test_reported_at_the_backward_and_the_help_clears_the_gradients(tmp_path, mode, name, program, first_line):
    outcome = run_program(tmp_path, program, mode=mode)
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD218"
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    help_ = diagnosis.help[0]
    assert help_.replacement.splitlines()[0] == first_line
    plain = run_plain(tmp_path, program, "plain.py")["result"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    expected = run_plain(tmp_path, CLEARED[name], "cleared.py")["result"]
    assert not all(torch.equal(a, b) for a, b in zip(plain, expected))  # the bug changes the result
    assert all(torch.allclose(a, b) for a, b in zip(fixed, expected))
    assert all(torch.equal(a, b) for a, b in zip(outcome.namespace["result"], plain))


def test_an_optimizer_s_parameters_are_not_ad212(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        for _ in range(3):
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
    """)
    assert "AD218" not in [d.code for d in outcome.diagnoses]
