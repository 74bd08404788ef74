"""AD247: a gradient taken with create_graph=True whose graph the next backward() never runs, while
a penalty built from it sits beside the loss (set 24's GANs-for-1D-Signal#7: WGAN-GP's gradient
penalty computed and left out of the critic's loss). The loss's assignment is named; the help adds
the penalty to it; the intended program, and programs that do backpropagate the penalty or only
look at a gradient, stay silent.
"""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

CRITIC_PENALTY_LEFT_OUT = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    generator = nn.Linear(2, 3)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
    real = torch.randn(16, 3)
    for step in range(3):
        fake = generator(torch.randn(16, 2)).detach()
        alpha = torch.rand(16, 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)  # GRAD
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean()  # LOSS
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in critic.parameters()]
"""

CRITIC_INTENDED = CRITIC_PENALTY_LEFT_OUT.replace(
    "loss = critic(fake).mean() - critic(real).mean()  # LOSS",
    "loss = critic(fake).mean() - critic(real).mean() + penalty  # LOSS")

# Another shape: a penalty per sample made in a helper function (not a scalar), an R1 term on the
# real data, the loss built in a function that returns it.
R1_IN_A_HELPER = """
    import torch
    from torch import nn

    torch.manual_seed(2)
    disc = nn.Sequential(nn.Linear(4, 6), nn.Softplus(), nn.Linear(6, 1))
    optimizer = torch.optim.SGD(disc.parameters(), lr=0.05)


    def r1(disc, real):
        real = real.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(disc(real).sum(), real, create_graph=True)
        return grad.pow(2).sum(dim=1)


    def step(real, fake):
        per_sample = r1(disc, real)
        loss_d = nn.functional.softplus(disc(fake)).mean() + nn.functional.softplus(-disc(real)).mean()  # LOSS
        optimizer.zero_grad()
        loss_d.backward()
        optimizer.step()


    for _ in range(3):
        step(torch.randn(8, 4), torch.randn(8, 4))
    result = [p.detach().clone() for p in disc.parameters()]
"""

R1_INTENDED = R1_IN_A_HELPER.replace(
    "loss_d = nn.functional.softplus(disc(fake)).mean() + nn.functional.softplus(-disc(real)).mean()  # LOSS",
    "loss_d = nn.functional.softplus(disc(fake)).mean() + nn.functional.softplus(-disc(real)).mean()"
    " + per_sample.mean()  # LOSS")

# A gradient taken with create_graph=True only to be looked at (its norm logged): no penalty built
# from it reaches the parameters the loss trains, so nothing is said.
LOGGED_INPUT_GRADIENT = """
    import torch
    from torch import nn

    torch.manual_seed(3)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    norms = []
    for step in range(3):
        x = torch.randn(8, 3, requires_grad=True)
        out = model(x).pow(2).sum()
        (g,) = torch.autograd.grad(out, x, create_graph=True)
        norms.append(g.norm().item())
        loss = model(x.detach()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_penalty_left_out_of_the_loss_is_named_at_the_loss(tmp_path):
    outcome = run_program(tmp_path, CRITIC_PENALTY_LEFT_OUT)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD247"]
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert outcome.line("GRAD") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == "loss = critic(fake).mean() - critic(real).mean() + penalty"


def test_the_help_applied_gives_the_intended_critic(tmp_path):
    outcome = run_program(tmp_path, CRITIC_PENALTY_LEFT_OUT)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD247"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, CRITIC_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, CRITIC_PENALTY_LEFT_OUT, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], fixed["result"]))


def test_the_intended_critic_is_silent(tmp_path):
    assert [d.code for d in run_program(tmp_path, CRITIC_INTENDED).diagnoses] == []


def test_a_per_sample_penalty_from_a_helper_is_added_as_its_mean(tmp_path):
    outcome = run_program(tmp_path, R1_IN_A_HELPER)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD247"]
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert diagnosis.help[0].replacement.endswith("+ per_sample.mean()")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, R1_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    assert [d.code for d in run_program(tmp_path, R1_INTENDED, "intended_watched.py").diagnoses] == []


def test_a_gradient_only_looked_at_is_not_reported(tmp_path):
    assert [d.code for d in run_program(tmp_path, LOGGED_INPUT_GRADIENT).diagnoses if d.code == "AD247"] == []
