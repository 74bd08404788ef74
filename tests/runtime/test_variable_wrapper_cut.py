"""AD211 and the gradient-path search read `torch.autograd.Variable(x)` as a cut: since PyTorch 0.4
it returns `x` detached. Set 17's Background-Matting composite came back from a helper as
`Variable(image_sh)`, so the generator's adversarial term trained nothing; the cut is the helper's
return statement, and the help returns the tensor itself."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

COMPOSITE_FROM_A_HELPER = """
    import torch
    from torch import nn
    from torch.autograd import Variable
    import torch.nn.functional as F

    torch.manual_seed(0)
    colorizer = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Tanh(), nn.Conv2d(4, 3, 1))
    critic = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1))
    critic(torch.zeros(1, 3, 8, 8))
    opt_c = torch.optim.Adam(colorizer.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)
    gray, color = torch.randn(4, 1, 8, 8), torch.randn(4, 3, 8, 8)


    def blend_with_gray(rgb, gray):
        mixed = 0.8 * rgb + 0.2 * gray
        return Variable(mixed)  # CUT


    losses = []
    for step in range(3):
        rgb = colorizer(gray)
        blended = blend_with_gray(rgb, gray)
        adversarial = F.softplus(-critic(blended)).mean()
        loss = F.l1_loss(rgb, color) + 0.1 * adversarial
        opt_c.zero_grad()
        loss.backward()
        opt_c.step()
        loss_d = F.softplus(critic(blended.detach())).mean() + F.softplus(-critic(color)).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in colorizer.parameters()]]
"""

INTENDED = COMPOSITE_FROM_A_HELPER.replace("        return Variable(mixed)  # CUT\n", "        return mixed\n")


def test_the_helpers_return_is_the_cut(tmp_path):
    outcome = run_program(tmp_path, COMPOSITE_FROM_A_HELPER)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD211"]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.help[0].replacement == "return mixed"


def test_returning_the_tensor_trains_the_colorizer_as_intended(tmp_path):
    outcome = run_program(tmp_path, COMPOSITE_FROM_A_HELPER)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD211"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_the_intended_version_is_silent(tmp_path):
    outcome = run_program(tmp_path, INTENDED)
    assert not [d for d in outcome.diagnoses if d.code == "AD211"]
