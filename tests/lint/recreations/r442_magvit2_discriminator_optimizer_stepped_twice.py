"""A video tokenizer's trainer updates its discriminator after the
tokenizer: it clears the discriminator's optimizer, backpropagates the
discriminator's loss, steps the optimizer, and then, where the tokenizer's
part of the same method steps its learning-rate scheduler inside the warmup's
`dampening()`, steps the discriminator's *optimizer* a second time.  No
backward runs between the two steps: the second one applies the same
gradients again (with Adam, a second update from moments that already hold
them), every iteration, and the discriminator's scheduler never moves.
Nothing raises.  The fix steps the scheduler in the second place.  Seen
while reading set W (docs/lint.md, twenty-fifth check); missed by the
frozen linter; ADL026 reports a second step of one optimizer with no
backward since the first (docs/lint.md, "Causes left open by r422-r443").
Source: https://github.com/lucidrains/magvit2-pytorch
(magvit2_pytorch/trainer.py, VideoTokenizerTrainer.train_step)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def build(seed=0):
    torch.manual_seed(seed)
    tokenizer = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 8))
    discriminator = nn.Sequential(nn.Linear(8, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1))
    return tokenizer, discriminator


def hinge_discr_loss(fake, real):
    return (F.relu(1 + fake) + F.relu(1 - real)).mean()


def discriminator_step(tokenizer, discriminator, discr_optimizer, discr_scheduler, video, correct):
    discr_optimizer.zero_grad()
    with torch.no_grad():
        recon = tokenizer(video)
    discr_loss = hinge_discr_loss(discriminator(recon), discriminator(video))
    discr_loss.backward()
    discr_optimizer.step()
    if correct:
        discr_scheduler.step()
    else:
        discr_optimizer.step()  # expect: ADL026


def trained_discriminator(correct):
    tokenizer, discriminator = build()
    discr_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-2)
    discr_scheduler = torch.optim.lr_scheduler.StepLR(discr_optimizer, step_size=1, gamma=0.9)
    torch.manual_seed(1)
    for _ in range(3):
        discriminator_step(tokenizer, discriminator, discr_optimizer, discr_scheduler,
                           torch.randn(16, 8), correct)
    return [p.detach().clone() for p in discriminator.parameters()]


def bug_shows():
    """The discriminator trained with the doubled step differs from the one
    trained with one step and a scheduler step per iteration."""
    buggy = trained_discriminator(correct=False)
    correct = trained_discriminator(correct=True)
    return any(not torch.equal(b, c) for b, c in zip(buggy, correct))
