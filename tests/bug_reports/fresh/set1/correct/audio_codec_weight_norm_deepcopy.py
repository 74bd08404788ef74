"""Audio codec with legacy `weight_norm`: `copy.deepcopy(model)` (for an EMA copy) fails because
the weight is computed from weight_g and weight_v, not a leaf.
Source: https://github.com/descriptinc/descript-audio-codec/issues/81 (fix: the parametrizations
version of weight_norm).
expect: raises"""
import copy

import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)
model = nn.Sequential(weight_norm(nn.Conv1d(1, 4, 5, padding=2)), nn.ELU(), nn.Conv1d(4, 1, 1))
ema = copy.deepcopy(model)
wave = torch.randn(2, 1, 16)
loss = (model(wave) - wave).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in model.parameters()]}
