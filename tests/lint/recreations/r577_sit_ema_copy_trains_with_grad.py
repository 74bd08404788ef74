"""SiT (Scalable Interpolant Transformers): an issue asks "Why do ema models
not need gradients only when there are pre-trained weights?"; `train.py`
builds `ema = deepcopy(model)` and calls `requires_grad(ema, False)` only in
the branch that loads a checkpoint, whereas DiT's script always does.  The
author confirms "the ema model indeed does not require grad at all time"
and fixes the script.  Re-created in the script's shape: the `requires_grad`
and `update_ema` helpers, the EMA copy, the optional checkpoint branch, the
training step, and a periodic sampling pass with the EMA model for logs.
Nothing raises; without a checkpoint the EMA weights require gradients and
every sampling pass with them records a graph.
Buggy line: `requires_grad(ema, False)` only inside `if ckpt is not None:`
(the EMA copy started from scratch keeps `requires_grad=True`).
Source: https://github.com/willisma/SiT/issues/6"""
from collections import OrderedDict
from copy import deepcopy

import torch
import torch.nn as nn


@torch.no_grad()
def update_ema(ema_model, model, decay=0.9999):
    ema_params = OrderedDict(ema_model.named_parameters())
    model_params = OrderedDict(model.named_parameters())
    for name, param in model_params.items():
        ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


class TinySiT(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 16), nn.SiLU(), nn.Linear(16, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], dim=1))


def sample(ema, n=4, steps=3, dim=8):
    x = torch.randn(n, dim)
    for i in range(steps):
        t = torch.full((n,), i / steps)
        x = x + ema(x, t) / steps
    return x


def main(ckpt=None, train_steps=2):
    model = TinySiT()
    ema = deepcopy(model)
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        ema.load_state_dict(ckpt["ema"])
        requires_grad(ema, False)  # missed: no rule (EMA copy left with requires_grad=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
    update_ema(ema, model, decay=0)
    model.train()
    ema.eval()
    samples = []
    for step in range(train_steps):
        x1 = torch.randn(4, 8)
        x0 = torch.randn(4, 8)
        t = torch.rand(4)
        xt = t[:, None] * x1 + (1 - t[:, None]) * x0
        loss = ((model(xt, t) - (x1 - x0)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema, model)
        samples.append(sample(ema))
    return ema, samples


def bug_shows():
    """Started without a checkpoint, the EMA model's samples carry graphs."""
    torch.manual_seed(0)
    ema, samples = main(ckpt=None)
    return all(p.requires_grad for p in ema.parameters()) and all(s.grad_fn is not None for s in samples)
