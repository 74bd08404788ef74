"""Focal loss: the per-element weights are computed from the predictions and passed as `weight=`
to binary_cross_entropy_with_logits, which is not differentiable with respect to its weight.
Source: https://github.com/pytorch/pytorch/issues/19254 (fix: `weight=weights.detach()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
head = nn.Linear(4, 3)
x = torch.randn(5, 4)
targets = torch.tensor([0, 2, 1, 1, 0])
alpha, gamma = 0.25, 2.0

preds = head(x)
onehot = F.one_hot(targets, 3).float()
prob = preds.sigmoid()
pt = prob * onehot + (1 - prob) * (1 - onehot)
weights = (alpha * onehot + (1 - alpha) * (1 - onehot)) * (1 - pt).pow(gamma)
loss = F.binary_cross_entropy_with_logits(preds, onehot, weight=weights.detach(), reduction="sum") / 5
loss.backward()
result = {"loss": loss.detach(), "w": head.weight.grad, "b": head.bias.grad}
