# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.
#   To disable this error and scale the gradients by the non-finite norm anyway, set
#   `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 16
# trigger: the clipping function comes from a config dataclass as functools.partial(clip_grad_norm_,
#   max_norm=..., error_if_nonfinite=True); the training loop under GradScaler (bfloat16 -> float16
#   autocast) calls it after unscale_, and the first steps at the initial scale overflow, as
#   GradScaler expects and skips
# source: none found; the pattern as users write it (a strict clipping default kept when AMP was added)
# results: weights
import functools
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class OptimConfig:
    lr: float = 0.1
    clip: object = field(default_factory=lambda: functools.partial(
        nn.utils.clip_grad_norm_, max_norm=1.0, error_if_nonfinite=True))  # PRIMARY


def train(model, batches, config):
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = model(x)
        loss = (out.float() - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        config.clip(model.parameters())
        scaler.step(optimizer)
        scaler.update()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
batches = [(torch.randn(8, 3) * 10, torch.randn(8, 2)) for _ in range(6)]
train(model, batches, OptimConfig())
weights = [p.detach().clone() for p in model.parameters()]
