"""A VQGAN trainer computes both losses from one forward pass: the
discriminator's `gan_loss` from `disc_fake = discriminator(decoded_images)`
with the reconstruction not detached.  It runs
`vq_loss.backward(retain_graph=True)`, clears the discriminator,
`gan_loss.backward()`, and then steps both optimizers.  The second backward
adds the discriminator objective's gradient into the VQGAN's `.grad`, which
`opt_vq.step()` applies: the generator is also pushed to make its fakes look
fake.  Nothing raises.  The fix detaches the reconstruction in the
discriminator's loss (`discriminator(decoded_images.detach())`).  Seen while
reading set V (docs/lint.md, twenty-fourth check); missed by ADL024.
Source: https://github.com/dome272/VQGAN-pytorch (training_vqgan.py,
TrainVQGAN.train)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def build(seed=0):
    torch.manual_seed(seed)
    vqgan = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 8))
    discriminator = nn.Sequential(nn.Linear(8, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1))
    return vqgan, discriminator


def train_step(vqgan, discriminator, opt_vq, opt_disc, imgs, detach_fake):
    decoded_images = vqgan(imgs)
    disc_real = discriminator(imgs)
    disc_fake = discriminator(decoded_images)
    rec_loss = torch.abs(imgs - decoded_images).mean()
    g_loss = -torch.mean(disc_fake)
    vq_loss = rec_loss + 0.1 * g_loss
    if detach_fake:  # the correct program: the discriminator's loss sees a constant fake
        disc_fake = discriminator(decoded_images.detach())
    d_loss_real = torch.mean(F.relu(1.0 - disc_real))
    d_loss_fake = torch.mean(F.relu(1.0 + disc_fake))
    gan_loss = 0.5 * (d_loss_real + d_loss_fake)

    opt_vq.zero_grad()
    vq_loss.backward(retain_graph=True)
    opt_disc.zero_grad()
    gan_loss.backward()  # expect: ADL024
    opt_vq.step()
    opt_disc.step()


def trained_vqgan(detach_fake):
    vqgan, discriminator = build()
    opt_vq = torch.optim.SGD(vqgan.parameters(), lr=0.1)
    opt_disc = torch.optim.SGD(discriminator.parameters(), lr=0.1)
    torch.manual_seed(1)
    for _ in range(3):
        train_step(vqgan, discriminator, opt_vq, opt_disc, torch.randn(16, 8), detach_fake)
    return [p.detach().clone() for p in vqgan.parameters()]


def bug_shows():
    """The VQGAN trained by the buggy step differs from the one trained with
    the fake detached in the discriminator's loss (the discriminator's own
    updates are the same in both: `detach` changes only where its loss's
    gradient goes)."""
    buggy = trained_vqgan(detach_fake=False)
    correct = trained_vqgan(detach_fake=True)
    return any(not torch.equal(b, c) for b, c in zip(buggy, correct))
