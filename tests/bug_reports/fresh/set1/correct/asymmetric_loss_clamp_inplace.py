"""Asymmetric loss for multi-label classification: the sigmoid's output is clamped in place.
Source: https://github.com/huggingface/pytorch-image-models/pull/1500 (fix: out-of-place ops).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
classifier = nn.Linear(5, 4)
x = torch.randn(3, 5)
y = (torch.rand(3, 4) > 0.5).float()
eps, clip, gamma_neg = 1e-8, 0.05, 4

xs_pos = torch.sigmoid(classifier(x))
xs_neg = 1 - xs_pos
xs_neg = (xs_neg + clip).clamp(max=1)
xs_pos = xs_pos.clamp(min=eps)
los_pos = y * torch.log(xs_pos)
los_neg = (1 - y) * torch.log(xs_neg.clamp(min=eps)) * (1 - xs_neg) ** gamma_neg
loss = -(los_pos + los_neg).sum()
loss.backward()
result = {"loss": loss.detach(), "w": classifier.weight.grad, "b": classifier.bias.grad}
