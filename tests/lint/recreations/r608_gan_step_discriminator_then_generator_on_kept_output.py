"""A Chinese blog post on the GAN error "one of the variables needed for
gradient computation has been modified by an inplace operation" explains
leaf and non-leaf tensors, then the usual trigger: one forward
`D(G(z))`, D's loss backpropagated with `retain_graph=True`, D's optimizer
stepped, and G's loss then computed from the same discriminator output and
backpropagated; the step wrote D's weights, which the kept graph saved.
Re-created as a small GAN `Trainer` class with a `train_step` that does just
that.  Raises at `loss_g.backward()`.
Buggy line: `self.opt_d.step()` (D's weights written before G's backward
through the graph that saved them).
Source: https://blog.51cto.com/u_16213604/11952018"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, z_dim=8):
        self.z_dim = z_dim
        self.G = Generator(z_dim)
        self.D = Discriminator()
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.bce = nn.BCELoss()

    def train_step(self, real):
        n = real.size(0)
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        fake = self.G(torch.randn(n, self.z_dim))
        d_fake = self.D(fake)
        loss_d = self.bce(self.D(real), ones) + self.bce(d_fake, zeros)
        self.opt_d.zero_grad()
        loss_d.backward(retain_graph=True)
        self.opt_d.step()  # expect: ADL003
        loss_g = self.bce(d_fake, ones)
        self.opt_g.zero_grad()
        loss_g.backward()
        self.opt_g.step()
        return loss_d.item(), loss_g.item()


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    for _ in range(2):
        trainer.train_step(torch.randn(6, 4))
