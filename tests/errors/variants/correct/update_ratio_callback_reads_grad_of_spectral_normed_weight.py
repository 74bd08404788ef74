# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 25
# trigger: a Lightning-style callback logs the update-to-weight ratio lr * weight.grad of a GAN critic's
#   first layer before each step; the layer is wrapped in
#   torch.nn.utils.parametrizations.spectral_norm, so layer.weight is computed (not a leaf) and its
#   .grad is None; the trained tensor is parametrizations.weight.original
# source: none found; the pattern as users write it (update-ratio logging, a parametrized layer)
# results: critic, losses, ratios
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import spectral_norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class UpdateRatioLogger:
    """Lightning-style callback: logs |lr * grad| / |weight| of one layer before every step,
    the usual health check of a learning rate."""

    def __init__(self, layer, lr):
        self.layer, self.lr = layer, lr
        self.ratios = []

    def on_before_optimizer_step(self):
        weight = self.layer.parametrizations.weight.original
        update = self.lr * weight.grad
        self.ratios.append((update.norm() / weight.norm()).item())


torch.manual_seed(0)
critic = nn.Sequential(spectral_norm(nn.Linear(4, 8)), nn.LeakyReLU(0.2), nn.Linear(8, 1))
lr = 0.05
optimizer = torch.optim.SGD(critic.parameters(), lr=lr)
logger = UpdateRatioLogger(critic[0], lr)
real, fake = torch.randn(6, 4), torch.randn(6, 4) + 1.0
losses = []
for step in range(3):
    loss = F.softplus(-critic(real)).mean() + F.softplus(critic(fake)).mean()
    optimizer.zero_grad()
    loss.backward()
    logger.on_before_optimizer_step()
    optimizer.step()
    losses.append(loss.detach())
ratios = logger.ratios
