"""Set AM (docs/lint.md, "A forty-first held-out check: set AM"): 4 default findings,
2 real, 2 debatable, 0 false; opt-in ADL030/ADL031 none.  No rule was changed for it:
these tests pin that the two real shapes stay found, in shapes not taken from the set,
with near-twins that stay silent, and check with torch that the findings are real
(the fixed programs give the hand-written results):

- ADL018 in ArcNerf (https://github.com/TencentARC/ArcNerf,
  `arcnerf/geometry/ray.py`): a helper fits one `nn.Parameter` with Adam,
  `backward()` and `step()` in a loop and never `zero_grad()`.
- ADL021 in pytorch-rl-kit (https://github.com/SSS135/pytorch-rl-kit,
  `ppo_pytorch/algs/advppo.py`): `disc_out.clamp_max(1.0)` as a statement in a
  discriminator's hinge loss.

The two debatable ADL001 lines (auto_LiRPA's test models, an in-place residual add
after `F.relu`, only traced by `BoundedModule`, never backpropagated through their
own `forward`) are left as they are: telling "handed to a wrapper that traces" from
"handed to a trainer that backpropagates" needs knowledge of the wrapper.
"""

from __future__ import annotations

import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename="<string>", selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# --- ADL018: a fitting helper that never clears its parameter's gradient ------------

FIT_NO_CLEAR = '''
import torch


def fit_centre(points, steps=20, lr=0.05):
    centre = torch.nn.Parameter(points.mean(0, keepdim=True) + 1.0)
    opt = torch.optim.SGD([centre], lr=lr)
    for _ in range(steps):
        spread = ((points - centre) ** 2).sum(-1).mean()
        spread.backward()
        opt.step()
    return centre.detach()
'''

FIT_CLEARED = FIT_NO_CLEAR.replace("        spread.backward()\n",
                                   "        opt.zero_grad()\n        spread.backward()\n")


def _hand_written_fit(points, steps=20, lr=0.05):
    centre = (points.mean(0, keepdim=True) + 1.0).clone().requires_grad_(True)
    for _ in range(steps):
        spread = ((points - centre) ** 2).sum(-1).mean()
        (grad,) = torch.autograd.grad(spread, centre)
        with torch.no_grad():
            centre.add_(grad, alpha=-lr)
    return centre.detach()


def test_fit_without_clear_is_found_at_the_step():
    assert _found(FIT_NO_CLEAR) == [("ADL018", _line(FIT_NO_CLEAR, "opt.step()"))]


def test_fit_with_clear_is_silent():
    assert _found(FIT_CLEARED) == []


def test_fit_oracle_cleared_equals_hand_written_and_uncleared_does_not():
    points = torch.randn(16, 3, generator=torch.Generator().manual_seed(0))
    expected = _hand_written_fit(points)
    fixed = _load(FIT_CLEARED, "fit_cleared")["fit_centre"](points)
    buggy = _load(FIT_NO_CLEAR, "fit_no_clear")["fit_centre"](points)
    assert torch.allclose(fixed, expected, rtol=0, atol=1e-6)
    assert not torch.allclose(buggy, expected, rtol=0, atol=1e-3)


# --- ADL021: a hinge clamp thrown away ------------------------------------------------

HINGE_DROPPED = '''
import torch


def critic_loss(critic, real, fake):
    scores = torch.cat([critic(real), -critic(fake)], 0)
    scores.clamp_max(1.0)
    return -scores.mean()
'''

HINGE_KEPT = HINGE_DROPPED.replace("    scores.clamp_max(1.0)\n", "    scores = scores.clamp_max(1.0)\n")


def test_dropped_clamp_is_found():
    assert _found(HINGE_DROPPED) == [("ADL021", _line(HINGE_DROPPED, "scores.clamp_max(1.0)"))]


def test_assigned_clamp_is_silent():
    assert _found(HINGE_KEPT) == []


def test_hinge_oracle_fixed_gradients_equal_the_hand_written_ones():
    torch.manual_seed(0)
    critic = nn.Linear(4, 1)
    with torch.no_grad():
        critic.bias.fill_(2.0)  # some scores above the hinge
    real, fake = torch.randn(6, 4), torch.randn(6, 4) - 3.0

    def grads(loss):
        return torch.autograd.grad(loss, list(critic.parameters()))

    scores = torch.cat([critic(real), -critic(fake)], 0)
    expected = grads(-torch.minimum(scores, torch.tensor(1.0)).mean())
    fixed = grads(_load(HINGE_KEPT, "hinge_kept")["critic_loss"](critic, real, fake))
    buggy = grads(_load(HINGE_DROPPED, "hinge_dropped")["critic_loss"](critic, real, fake))
    assert all(torch.equal(a, b) for a, b in zip(fixed, expected))
    assert not all(torch.allclose(a, b) for a, b in zip(buggy, expected))
