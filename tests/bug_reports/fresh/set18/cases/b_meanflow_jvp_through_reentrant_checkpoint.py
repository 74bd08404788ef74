"""MeanFlow (one-step generative model): a network u(z, r, t) predicts the average velocity over
[r, t], trained against the target v - (t - r) * du/dt, where the total derivative du/dt along the
flow is a Jacobian-vector product with tangents (v, 0, 1). To save memory each residual block of
the network is wrapped in `torch.utils.checkpoint.checkpoint(..., use_reentrant=True)`. The JVP is
taken with `torch.autograd.functional.jvp`, which runs `torch.autograd.grad` (twice) through the
network, and the reentrant checkpoint refuses it: "Checkpointing is not compatible with .grad() or
when an `inputs` parameter is passed to .backward()".
Source: https://github.com/haidog-yaqub/MeanFlow/issues/4 ("About torch.utils.checkpoint": adding
gradient checkpointing to the MeanFlow model fails with that error in the `jvp` calculation; the
non-reentrant checkpoint, `use_reentrant=False`, is the variant that supports
`torch.autograd.grad`).
expect: raises"""
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
            h = checkpoint(block, h, use_reentrant=True)
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
