"""A GAN whose `loss_nonsaturating(d, g, x_real)` returns both the
discriminator's and the generator's loss from one forward pass (`gz = g(z)`,
`d(gz)` without `detach()`); the training loop steps the discriminator on
`d_loss` and then backpropagates `g_loss` through the discriminator's stepped
weights ("modified by an inplace operation").  The article's fix detaches
`gz` for the discriminator and recomputes the generator's loss.
Source: https://www.chuangxiangniao.com/p/616193.html"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, z_dim=4, out_dim=6):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, out_dim))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def loss_nonsaturating(d, g, x_real, *, device):
    z = torch.randn(x_real.shape[0], g.z_dim, device=device)
    gz = g(z)
    dgz = F.sigmoid(d(gz))
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], device=device)
    fake_label = torch.zeros(x_real.shape[0], device=device)
    bce_loss = F.binary_cross_entropy_with_logits
    g_loss = F.binary_cross_entropy(dgz, real_label).mean()
    d_loss = bce_loss(dx, real_label).mean() + F.binary_cross_entropy(dgz, fake_label).mean()
    return d_loss, g_loss


def train(d, g, d_optimizer, g_optimizer, batches, device="cpu"):
    for x_real in batches:
        d_loss, g_loss = loss_nonsaturating(d, g, x_real, device=device)
        d_optimizer.zero_grad()
        d_loss.backward(retain_graph=True)
        d_optimizer.step()  # expect: ADL003

        g_optimizer.zero_grad()
        g_loss.backward()
        g_optimizer.step()


def run():
    torch.manual_seed(0)
    d, g = Discriminator(), Generator()
    train(d, g, torch.optim.Adam(d.parameters(), lr=2e-4), torch.optim.Adam(g.parameters(), lr=2e-4),
          [torch.randn(8, 6) for _ in range(2)])
