"""AD103 where the loss whose backward() fails reaches the weights the earlier step() updated
(a generator's loss through the discriminator, held-out set 7: SRGAN#79 and a tutorial GAN):
moving that step() after the backward() would train the discriminator on the generator's loss
too, so the help that computes the discriminator's forward line again after the step comes first,
and applied it gives what the accepted answer computes."""

import torch

from helpers import apply_help, run_plain, run_program
from autograd_doctor.diagnosis.model import help_message

SRGAN = """
import torch
torch.manual_seed(0)
netG = torch.nn.Linear(4, 6)
netD = torch.nn.Sequential(torch.nn.Linear(6, 1), torch.nn.Sigmoid())
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-2)
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-2)
real, z = torch.rand(8, 6), torch.rand(8, 4)
for step in range(2):
    fake = netG(z)
    netD.zero_grad()
    real_out = netD(real).mean()
    fake_out = netD(fake).mean()
    d_loss = 1 - real_out + fake_out
    d_loss.backward(retain_graph=True)
    optimizerD.step()
    netG.zero_grad()
    g_loss = ((fake - real) ** 2).mean() + 0.01 * (1 - fake_out)
    g_loss.backward()
    optimizerG.step()
params = [p.detach().clone() for p in [*netG.parameters(), *netD.parameters()]]
"""

# The thread's answer: compute the discriminator's output on the fake again after its step.
ANSWER = SRGAN.replace("    netG.zero_grad()\n", "    netG.zero_grad()\n    fake_out = netD(fake).mean()\n")


def test_the_forward_line_computed_again_comes_first(tmp_path):
    outcome = run_program(tmp_path, SRGAN)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD103")
    first, second = diagnosis.help[0], diagnosis.help[1]
    assert help_message(0, first.message).startswith("if g_loss is meant to go through the updated weights: compute line 13 again "
                                    "after optimizerD.step()")
    assert help_message(1, second.message).startswith("or, call optimizerD.step() after g_loss.backward()")
    assert "it trains them on d_loss + g_loss" in second.message


def test_the_first_help_applied_computes_what_the_answer_computes(tmp_path):
    outcome = run_program(tmp_path, SRGAN)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    expected = run_plain(tmp_path, ANSWER, "answer.py")["params"]
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(fixed, expected))
