"""Rational-quadratic spline coupling: the widths and heights, views of the conditioner's output,
are scaled in place with `/=`.
Source: https://github.com/bayesiains/nflows/issues/89 (fix: `w = w / sqrt(hidden)` for both).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
num_bins, hidden = 4, 8
conditioner = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 3 * num_bins), nn.ReLU())
x = torch.randn(6, 2)

params = conditioner(x)
unnormalized_widths = params[:, :num_bins]
unnormalized_heights = params[:, num_bins:2 * num_bins]
unnormalized_widths /= math.sqrt(hidden)
unnormalized_heights /= math.sqrt(hidden)
widths = torch.softmax(unnormalized_widths, dim=-1)
heights = torch.softmax(unnormalized_heights, dim=-1)
loss = (widths.cumsum(-1) * heights).sum() + params[:, 2 * num_bins:].pow(2).sum()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in conditioner.parameters()]}
