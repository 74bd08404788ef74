"""Pose-guided person image diffusion model (ankanbhunia/PIDM): the denoiser's residual blocks are
wrapped in a reentrant gradient checkpoint called with `preserve_rng_state=False` to save time.
The blocks use dropout, so the recomputation in backward draws another dropout mask than the
forward pass did: the gradients flow "into wrong input cells" and training slowly fails. Nothing
is raised.
Source: https://github.com/ankanbhunia/PIDM/pull/66 ("fix checkpoint": with
`preserve_rng_state=False` dropout does not work under gradient checkpointing; the fix passes
`preserve_rng_state=True`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

CHANNELS, STEPS = 8, 50


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1)
        self.conv2 = nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1)
        self.dropout = nn.Dropout(0.3)

    def _forward(self, x):
        h = self.dropout(F.silu(self.conv1(x)))
        return x + self.conv2(h)

    def forward(self, x):
        return checkpoint(self._forward, x, use_reentrant=True, preserve_rng_state=True)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Conv2d(3, CHANNELS, 3, padding=1)
        self.blocks = nn.Sequential(ResBlock(), ResBlock())
        self.out = nn.Conv2d(CHANNELS, 3, 3, padding=1)

    def forward(self, x_t, t):
        h = self.inp(x_t) + (t.float() / STEPS).view(-1, 1, 1, 1)
        return self.out(self.blocks(h))


model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
alphas_bar = torch.linspace(0.99, 0.1, STEPS)
images = torch.rand(3, 2, 3, 8, 8)

losses = []
for step in range(3):
    optimizer.zero_grad()
    t = torch.randint(0, STEPS, (2,))
    noise = torch.randn_like(images[step])
    a = alphas_bar[t].view(-1, 1, 1, 1)
    x_t = a.sqrt() * images[step] + (1 - a).sqrt() * noise
    loss = F.mse_loss(model(x_t, t), noise)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
