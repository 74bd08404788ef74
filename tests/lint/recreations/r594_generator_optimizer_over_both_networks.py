"""A Cross Validated question on how a GAN's generator is trained; the
answer's pseudocode stresses that the generator's loss must update only the
generator's parameters, the discriminator being part of the metric.  The
mistake it warns about, and that readers then post, is one optimizer over
both networks for the generator's loss: the generator's step also moves the
discriminator toward rating fakes as real.  Re-created as a trainer with a
`G` / `D` pair, a `D_solver` over D and a `G_solver` built over
`list(G.parameters()) + list(D.parameters())`.  Nothing raises; the
discriminator's weights change during the generator's update.
Buggy line: `self.G_solver = torch.optim.Adam(list(self.G.parameters()) +
list(self.D.parameters()), ...)` (G's loss steps D too).
Source: https://stats.stackexchange.com/questions/237944/how-is-the-generator-in-a-gan-trained/473545"""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, z_dim=4, x_dim=8):
        self.z_dim = z_dim
        self.G = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, x_dim))
        self.D = nn.Sequential(nn.Linear(x_dim, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
        self.D_solver = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.G_solver = torch.optim.Adam(list(self.G.parameters()) + list(self.D.parameters()), lr=1e-3)  # missed: ADL024

    def d_step(self, X):
        Z = torch.randn(X.size(0), self.z_dim)
        D_real = self.D(X)
        D_fake = self.D(self.G(Z).detach())
        D_loss = -torch.mean(torch.log(D_real) + torch.log(1 - D_fake))
        self.D_solver.zero_grad()
        D_loss.backward()
        self.D_solver.step()

    def g_step(self, batch_size):
        Z = torch.randn(batch_size, self.z_dim)
        G_loss = -torch.mean(torch.log(self.D(self.G(Z))))
        self.G_solver.zero_grad()
        G_loss.backward()
        self.G_solver.step()


def bug_shows():
    """The generator's update moves the discriminator's weights."""
    torch.manual_seed(0)
    trainer = GANTrainer()
    trainer.d_step(torch.randn(6, 8))
    before = [p.detach().clone() for p in trainer.D.parameters()]
    trainer.g_step(6)
    return any(not torch.equal(b, p) for b, p in zip(before, trainer.D.parameters()))
