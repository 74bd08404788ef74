"""A Q&A page on a GAN training error ("modified by an inplace operation"):
the user's `loss_nonsaturating(d, g, x_real)` computes `gz = g(z)`,
`dgz = sigmoid(d(gz))` and `dx = d(x_real)` once and returns both the
discriminator's and the generator's losses; the training loop backpropagates
D's loss, steps D's optimizer, then backpropagates G's loss through the same
`d(gz)`, whose saved weights the step has overwritten.  Re-created with the
page's function shape, two small MLPs, and the loop in a `train` function.
Raises at `g_loss.backward()`.
Buggy line: `d_optimizer.step()` (D's weights written between the shared
forward and G's backward).
Source: https://php.bkmy88.com/faq/1575425.html"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class G(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, z):
        return self.net(z)


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def loss_nonsaturating(d, g, x_real):
    z = torch.randn(x_real.shape[0], g.z_dim)
    gz = g(z)
    dgz = torch.sigmoid(d(gz))
    dx = torch.sigmoid(d(x_real))
    d_loss = -(torch.log(dx + 1e-8) + torch.log(1 - dgz + 1e-8)).mean()
    g_loss = -torch.log(dgz + 1e-8).mean()
    return d_loss, g_loss


def train(d, g, steps=2):
    d_optimizer = torch.optim.Adam(d.parameters(), lr=1e-3)
    g_optimizer = torch.optim.Adam(g.parameters(), lr=1e-3)
    for _ in range(steps):
        x_real = torch.randn(8, 2)
        d_loss, g_loss = loss_nonsaturating(d, g, x_real)
        d_optimizer.zero_grad()
        d_loss.backward(retain_graph=True)
        d_optimizer.step()  # expect: ADL003
        g_optimizer.zero_grad()
        g_loss.backward()
        g_optimizer.step()


def run():
    torch.manual_seed(0)
    train(D(), G())
