"""The adaptive-weighted GAN method's `aw_loss` helper sets the
discriminator's gradients itself: it backpropagates the real loss (keeping
the graph) and the fake loss (freeing it), reads both gradients, and writes
their weighted sum into each `param.grad`; it returns `aw_loss = w_r *
Dloss_real + w_f * Dloss_fake` for logging.  A user's cDCGAN loop then
called `aw_loss.backward(retain_graph=True)` on that result, which goes
through the fake loss's freed graph ("Trying to backward through the graph
a second time").  The fix steps the discriminator's optimizer on the
gradients the helper wrote, without another backward.
Buggy line: `aw_loss.backward(retain_graph=True)` in `train_step`.
Expected finding: ADL019 (a backward through a graph the helper's backward
freed).
Source: https://github.com/vasily789/adaptive-weighted-gans/issues/6"""
import torch
import torch.nn as nn


class AWMethod:
    def __init__(self, epsilon=0.05):
        self.epsilon = epsilon

    def aw_loss(self, Dloss_real, Dloss_fake, Dis_opt, Dis_Net):
        Dis_opt.zero_grad()
        Dloss_real.backward(retain_graph=True)
        grad_real = [p.grad.clone() for p in Dis_Net.parameters()]
        Dis_opt.zero_grad()
        Dloss_fake.backward()
        grad_fake = [p.grad.clone() for p in Dis_Net.parameters()]
        Dis_opt.zero_grad()
        r_norm = torch.sqrt(sum((g * g).sum() for g in grad_real)).item() + 1e-4
        f_norm = torch.sqrt(sum((g * g).sum() for g in grad_fake)).item() + 1e-4
        w_r = 1 / r_norm + self.epsilon
        w_f = 1 / f_norm + self.epsilon
        aw_loss = w_r * Dloss_real + w_f * Dloss_fake
        for p, g_r, g_f in zip(Dis_Net.parameters(), grad_real, grad_fake):
            p.grad = w_r * g_r + w_f * g_f
        return aw_loss


def train_step(G, D, G_opt, D_opt, aw, real, z, criterion):
    real_validity = D(real).squeeze(1)
    Dloss_real = criterion(real_validity, torch.ones_like(real_validity))
    x_fake = G(z)
    fake_validity = D(x_fake.detach()).squeeze(1)
    Dloss_fake = criterion(fake_validity, torch.zeros_like(fake_validity))
    aw_loss = aw.aw_loss(Dloss_real, Dloss_fake, D_opt, D)
    aw_loss.backward(retain_graph=True)  # expect: ADL019
    D_opt.step()
    G_opt.zero_grad()
    validity = D(G(z)).squeeze(1)
    G_loss = criterion(validity, torch.ones_like(validity))
    G_loss.backward()
    G_opt.step()


def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    G_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
    D_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
    train_step(G, D, G_opt, D_opt, AWMethod(), torch.randn(3, 4), torch.randn(3, 2), nn.BCEWithLogitsLoss())
