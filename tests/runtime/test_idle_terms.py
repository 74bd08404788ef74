"""AD211 (a loss term trains nothing that steps) stays silent on correct training loops whose
losses add several terms: a GAN whose generator term goes through the discriminator, gradient
accumulation, two optimizers stepped after one backward(), a frozen or no_grad teacher, an
auxiliary head stepped later from accumulated gradients, an actor-critic with one optimizer.
Parameters under the doctor are bitwise those of a plain run. The buggy program with a
`.detach()` is in tests/silent (gan_generator_term_detached)."""

import pytest

from helpers import grads_equal, run_plain, run_program

PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
g = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 4))
d = nn.Sequential(nn.Linear(4, 5), nn.LeakyReLU(0.2), nn.Linear(5, 1))
opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
batches = [(torch.randn(6, 3), torch.randn(6, 4)) for _ in range(3)]
"""

CORRECT = {
    "GAN: the generator's term through the discriminator, the discriminator's on fake.detach()": """
for z, real in batches:
    fake = g(z)
    adversarial = F.softplus(-d(fake)).mean()
    l1 = F.l1_loss(fake, real)
    loss_g = adversarial + 10 * l1
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    loss_real = F.softplus(-d(real)).mean()
    loss_fake = F.softplus(d(fake.detach())).mean()
    loss_d = loss_real + loss_fake
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
""",
    "accumulation over two backward calls": """
for index, (z, real) in enumerate(batches * 2):
    fake = g(z)
    fit = F.mse_loss(fake, real)
    smooth = fake.diff(dim=1).abs().mean()
    loss = (fit + smooth) / 2
    loss.backward()
    if index % 2 == 1:
        opt_g.step()
        opt_g.zero_grad()
""",
    "two optimizers stepped after one backward": """
for z, real in batches:
    fake = g(z)
    reconstruction = F.mse_loss(fake, real)
    critic_fit = F.mse_loss(d(real), torch.ones(6, 1))
    loss = reconstruction + critic_fit
    opt_g.zero_grad()
    opt_d.zero_grad()
    loss.backward()
    opt_g.step()
    opt_d.step()
""",
    "a frozen teacher and a no_grad teacher": """
teacher = nn.Linear(3, 4).requires_grad_(False)
for z, real in batches:
    with torch.no_grad():
        soft = torch.tanh(teacher(z))
    fit = F.mse_loss(g(z), real)
    distill = F.mse_loss(g(z), soft)
    anchor = teacher(z).pow(2).mean()
    loss = fit + distill + anchor
    opt_g.zero_grad()
    loss.backward()
    opt_g.step()
""",
    "an auxiliary head stepped every other iteration from accumulated gradients": """
for index, (z, real) in enumerate(batches * 2):
    features = g(z)
    main = F.mse_loss(features, real)
    auxiliary = F.mse_loss(d(real), torch.zeros(6, 1))
    loss = main + auxiliary
    opt_g.zero_grad()
    loss.backward()
    opt_g.step()
    if index % 2 == 1:
        opt_d.step()
        opt_d.zero_grad()
""",
    "a critic fit on a detached bootstrap target, then the actor's loss through the critic": """
for z, real in batches:
    action = g(z)
    value = d(action.detach())
    target = real.sum(1, keepdim=True) + 0.9 * d(real).detach()
    critic = F.mse_loss(value, target)
    opt_d.zero_grad()
    critic.backward()
    opt_d.step()
    actor = -d(g(z)).mean()
    opt_g.zero_grad()
    actor.backward()
    opt_g.step()
""",
    "actor-critic with one optimizer": """
both = torch.optim.SGD([*g.parameters(), *d.parameters()], lr=0.1)
for z, real in batches:
    action = g(z)
    value = d(action.detach())
    actor = -(action * real).mean()
    critic = F.mse_loss(value, torch.ones(6, 1))
    loss = actor + 0.5 * critic
    both.zero_grad()
    loss.backward()
    both.step()
""",
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_loss_with_several_terms_is_silent_and_unchanged(tmp_path, name, mode):
    source = PRELUDE + CORRECT[name] + "grads = [p.detach().clone() for p in [*g.parameters(), *d.parameters()]]\n"
    plain = run_plain(tmp_path, source, "plain.py")
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == [] and outcome.warnings == [], [str(d) for d in outcome.diagnoses]
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_a_term_of_another_model_only_is_reported_at_its_line_with_advice(tmp_path):
    outcome = run_program(tmp_path, PRELUDE + """
for z, real in batches:
    fit = F.mse_loss(g(z), real)
    realism = F.softplus(-d(real)).mean()  # TERM
    loss = fit + realism
    opt_g.zero_grad()
    opt_d.zero_grad()
    loss.backward()  # BACKWARD
    opt_g.step()
""")
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD211" and len(outcome.warnings) == 1
    assert diagnosis.primary.line == outcome.line("TERM")
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert "opt_g.step() does not update" in diagnosis.notes[0]
    (help_,) = diagnosis.help
    assert help_.replacement is None
