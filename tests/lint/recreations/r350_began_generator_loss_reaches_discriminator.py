"""BEGAN (boundary equilibrium GAN): the discriminator is an autoencoder, and
each side has its own loss: D minimises L(x) - k_t * L(G(z)), G minimises
L(G(z)), with L(v) = |v - D(v)|.  The trainer adds both into one loss,
`loss = d_loss + g_loss`, calls `loss.backward()` once and steps both
optimizers.  `d_loss` reads the fake images detached, so G's gradient is right;
but `g_loss = l1(fake, D(fake))` goes through D's layers, and nothing stops
its gradient there (no `detach()`, D's parameters still require grad), so
`d_optim.step()` applies the gradient of `d_loss + g_loss` to D: D is pulled
towards reconstructing the fakes well, with weight 1 - k_t, the opposite of
its objective.  Nothing raises; every step of D is wrong.  Found while reading
set R (docs/lint.md, twentieth check); ADL024 (a loss meant for one
network reaching another network's optimizer) finds it at the backward.
Source: https://github.com/carpedm20/BEGAN-pytorch (trainer.py, Trainer.train)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 6), nn.ELU(), nn.Linear(6, 4))
D = nn.Sequential(nn.Linear(4, 3), nn.ELU(), nn.Linear(3, 4))  # an autoencoder
g_optim = torch.optim.SGD(G.parameters(), lr=0.1)
d_optim = torch.optim.SGD(D.parameters(), lr=0.1)
l1 = nn.L1Loss()


def train_step(x, z, k_t):
    D.zero_grad()
    G.zero_grad()
    fake = G(z)
    d_loss = l1(D(x), x) - k_t * l1(D(fake.detach()), fake.detach())
    g_loss = l1(fake, D(fake))
    loss = d_loss + g_loss
    loss.backward()  # expect: ADL024
    g_optim.step()
    d_optim.step()


def bug_shows():
    """D's gradient is that of d_loss + g_loss, not of d_loss alone."""
    x, z, k_t = torch.randn(5, 4), torch.randn(5, 2), 0.3
    fake = G(z).detach()
    d_loss = l1(D(x), x) - k_t * l1(D(fake), fake)
    wanted = torch.autograd.grad(d_loss, list(D.parameters()))
    for p in D.parameters():
        p.grad = None
    D.zero_grad()
    G.zero_grad()
    fake = G(z)
    loss = l1(D(x), x) - k_t * l1(D(fake.detach()), fake.detach()) + l1(fake, D(fake))
    loss.backward()
    return any(not torch.allclose(p.grad, w) for p, w in zip(D.parameters(), wanted))
