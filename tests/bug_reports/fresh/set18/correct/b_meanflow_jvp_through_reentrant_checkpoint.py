"""MeanFlow with non-reentrant checkpoints, which support the JVP's torch.autograd.grad.
Source: https://github.com/haidog-yaqub/MeanFlow/issues/4."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

DIM, HIDDEN = 4, 32


class ResidualBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.SiLU(), nn.Linear(HIDDEN, HIDDEN))

    def forward(self, h):
        return h + self.net(h)


class AverageVelocity(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(DIM + 2, HIDDEN)
        self.blocks = nn.ModuleList([ResidualBlock() for _ in range(3)])
        self.out = nn.Linear(HIDDEN, DIM)

    def forward(self, z, r, t):
        h = self.embed(torch.cat([z, r, t], dim=-1))
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False)
        return self.out(F.silu(h))


model = AverageVelocity()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(6):
    x = torch.randn(32, DIM) * 0.5 + 1.0
    noise = torch.randn(32, DIM)
    t = torch.rand(32, 1)
    r = t * torch.rand(32, 1)
    z = (1 - t) * x + t * noise
    v = noise - x
    u, dudt = torch.autograd.functional.jvp(
        model, (z, r, t), (v, torch.zeros_like(r), torch.ones_like(t)), create_graph=True)
    target = (v - (t - r) * dudt).detach()
    loss = F.mse_loss(u, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
