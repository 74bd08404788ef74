"""AD301 when a module made a tensor while a loop of the same block had turned its parameters'
requires_grad off, and a later loop turned it back on before the tensor's loss was backpropagated
(held-out set 20, SRGAN-PyTorch#37: the generator's super-resolved image made in the
discriminator's phase, reused in the generator's). The freezing loop is named (it used to name the
call and guess a cut inside the called function); the help moves the statement that made the tensor
to just before the freezing loop, which gives the maintainer's fix's parameters."""

import torch

from helpers import apply_help, run_as_script, run_plain

ALTERNATING = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(3, 12, 3, padding=1), nn.PixelShuffle(2))
discriminator = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.Flatten(), nn.Linear(64, 1))
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for step in range(3):
    hr = torch.rand(2, 3, 8, 8)
    lr = F.avg_pool2d(hr, 2)
    for p in discriminator.parameters():
        p.requires_grad = True
    for p in generator.parameters():  # FREEZE
        p.requires_grad = False
    discriminator.zero_grad()
    bce(discriminator(hr), torch.ones(2, 1)).backward()
    fake = generator(lr)  # MADE
    bce(discriminator(fake.detach()), torch.zeros(2, 1)).backward()
    d_optimizer.step()
    for p in discriminator.parameters():
        p.requires_grad = False
    for p in generator.parameters():  # UNFREEZE
        p.requires_grad = True
    generator.zero_grad()
    g_loss = F.mse_loss(fake, hr) + 1e-3 * bce(discriminator(fake), torch.ones(2, 1))
    g_loss.backward()  # BACKWARD
    g_optimizer.step()
params = [p.detach().clone() for p in list(generator.parameters()) + list(discriminator.parameters())]
"""

# The maintainer's fix: no requires_grad switching; the discriminator sees fake.detach().
NO_SWITCHING = ALTERNATING.replace("""    for p in discriminator.parameters():
        p.requires_grad = True
    for p in generator.parameters():  # FREEZE
        p.requires_grad = False
""", "").replace("""    for p in discriminator.parameters():
        p.requires_grad = False
    for p in generator.parameters():  # UNFREEZE
        p.requires_grad = True
""", "")


def test_the_freezing_loop_is_named_and_moving_the_call_before_it_trains_as_the_fix(tmp_path):
    outcome = run_as_script(tmp_path, ALTERNATING)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("FREEZE")
    lines = {r.line for r in diagnosis.related}
    assert {outcome.line("MADE"), outcome.line("UNFREEZE"), outcome.line("BACKWARD")} <= lines
    assert "made while the loop" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement.startswith("fake = generator(lr)")
    fixed = run_plain(tmp_path, apply_help(outcome), name="fixed.py")
    reference = run_plain(tmp_path, NO_SWITCHING, name="reference.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["params"], reference["params"]))


def test_a_statement_between_that_reads_the_tensor_leaves_advice(tmp_path):
    source = ALTERNATING.replace("    discriminator.zero_grad()\n",
                                 "    discriminator.zero_grad()\n    previous = fake if step else None\n", 1)
    outcome = run_as_script(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("FREEZE")
    assert all(h.replacement is None for h in diagnosis.help)


def test_a_module_frozen_for_good_keeps_the_older_diagnosis(tmp_path):
    source = ALTERNATING.replace("        p.requires_grad = True\n    generator.zero_grad()",
                                 "        p.requires_grad = False\n    generator.zero_grad()")
    outcome = run_as_script(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.extra.get("cut") != "frozen_when_called"


def test_the_tensor_made_again_after_unfreezing_runs_silently(tmp_path):
    source = ALTERNATING.replace("    generator.zero_grad()\n", "    generator.zero_grad()\n    fake = generator(lr)\n")
    outcome = run_as_script(tmp_path, source)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD301"]
