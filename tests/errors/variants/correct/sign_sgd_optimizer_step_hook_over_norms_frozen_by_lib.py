# message: 'NoneType' object has no attribute 'sign'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 29
# trigger: a Lightning-like module overrides its optimizer_step hook with a hand-written signSGD
#   update over self.parameters(); a fine-tuning helper in another file froze the LayerNorms with
#   requires_grad_(False), so their .grad is None when the hook reads p.grad.sign()
# source: none found; the pattern as users write it (signSGD / Lion-style updates written by hand in a hook)
# helpers: lib_freeze29.py
# results: losses, module.net
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_freeze29 import freeze_norms  # noqa: E402


class SignSgdRegressor(nn.Module):
    def __init__(self, lr=0.01):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    @torch.no_grad()
    def optimizer_step(self):
        for p in self.parameters():
            if p.grad is not None:
                p.add_(p.grad.sign(), alpha=-self.lr)  # PRIMARY

    def fit(self, batches):
        losses = []
        for batch in batches:
            self.zero_grad()
            loss = self.training_step(batch)
            loss.backward()
            self.optimizer_step()
            losses.append(loss.detach())
        return losses


torch.manual_seed(0)
module = SignSgdRegressor()
freeze_norms(module.net)
batches = [(torch.randn(6, 4), torch.randn(6, 1)) for _ in range(3)]
losses = module.fit(batches)
