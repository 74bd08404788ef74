"""AD103 where two optimizers hold the same weights (a content update, then an adversarial
update, of one generator output; held-out set 21: pytorch#55368, a spectral-normalised generator)
and the second optimizer's zero_grad() sits between the first step() and the failing backward().
Moving the first step() after that backward() would not apply the first loss's gradients at all
(the zero_grad() in between clears them) and the weights would be stepped twice on the second
loss: the move is not offered, the help that runs the forward pass again after the step is the
first, and applied it gives what the hand-written version computes. Another optimizer's
zero_grad() that holds none of the stepped weights keeps the move."""

import torch

from helpers import apply_help, run_plain, run_program
from autograd_doctor.diagnosis.model import help_message

TWO_UPDATES = """
import torch
from torch.nn.utils import spectral_norm
torch.manual_seed(0)
net = spectral_norm(torch.nn.Linear(3, 4))
critic = torch.nn.Linear(4, 1)
first_opt = torch.optim.SGD(net.parameters(), lr=1e-2)
second_opt = torch.optim.SGD(net.parameters(), lr=1e-2)
target, x = torch.rand(6, 4), torch.rand(6, 3)
for step in range(2):
    out = net(x)
    first_loss = (out - target).abs().mean()
    first_opt.zero_grad()
    first_loss.backward(retain_graph=True)
    first_opt.step()
    second_loss = critic(out).mean()
    CLEARED.zero_grad()
    second_loss.backward()
    second_opt.step()
params = [p.detach().clone() for p in net.parameters()]
"""

SHARED = TWO_UPDATES.replace("CLEARED", "second_opt")
# Written by hand: the second loss goes through the weights after the first update.
ANSWER = SHARED.replace("    first_opt.step()\n", "    first_opt.step()\n    out = net(x)\n")


def test_the_step_is_not_moved_past_a_zero_grad_of_the_same_weights(tmp_path):
    outcome = run_program(tmp_path, SHARED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD103")
    assert diagnosis.primary.line == 15  # first_opt.step()
    messages = [help_message(i, h.message) for i, h in enumerate(diagnosis.help)]
    assert messages[0].startswith("if second_loss is meant to go through the updated weights: compute line 11 "
                                  "again after first_opt.step()")
    assert not any("call first_opt.step() after second_loss.backward()" in m for m in messages)


def test_the_first_help_applied_computes_what_the_hand_written_version_computes(tmp_path):
    outcome = run_program(tmp_path, SHARED)
    assert outcome.diagnosis.code == "AD103"
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    expected = run_plain(tmp_path, ANSWER, "answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, expected))


def test_a_zero_grad_of_other_weights_keeps_the_move(tmp_path):
    outcome = run_program(tmp_path, TWO_UPDATES.replace("CLEARED", "critic"))
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD103")
    messages = [h.message for h in diagnosis.help]
    assert any("call first_opt.step() after second_loss.backward()" in m for m in messages)
