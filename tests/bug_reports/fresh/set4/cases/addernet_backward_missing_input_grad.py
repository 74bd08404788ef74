"""AdderNet: a custom autograd Function computes an adder layer (-|W - X| summed instead of a
product) on unfolded image patches; its backward computes the gradients of both inputs but returns
only the weights' one.
Source: https://github.com/huawei-noah/AdderNet/issues/21 ("function adderBackward returned an
incorrect number of gradients (expected 2, got 1)"; answer: return both, `return grad_W_col,
grad_X_col`).
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Adder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, W_col, X_col):
        ctx.save_for_backward(W_col, X_col)
        return -(W_col.unsqueeze(2) - X_col.unsqueeze(0)).abs().sum(1)

    @staticmethod
    def backward(ctx, grad_output):
        W_col, X_col = ctx.saved_tensors
        difference = X_col.unsqueeze(0) - W_col.unsqueeze(2)
        grad_W_col = (difference * grad_output.unsqueeze(1)).sum(2)
        # adaptive learning-rate scaling of the paper: normalise the weight gradient
        grad_W_col = grad_W_col / grad_W_col.norm(p=2).clamp(min=1e-12) * math.sqrt(W_col.numel()) / 5
        grad_X_col = (-difference.clamp(-1, 1) * grad_output.unsqueeze(1)).sum(0)
        return grad_W_col


class Adder2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.weight = nn.Parameter(torch.randn(out_channels, in_channels * kernel_size ** 2) * 0.1)

    def forward(self, x):
        n, _, h, w = x.shape
        X_col = F.unfold(x, self.kernel_size, padding=1).permute(1, 0, 2).reshape(self.weight.shape[1], -1)
        out = Adder.apply(self.weight, X_col)
        return out.view(-1, n, h, w).permute(1, 0, 2, 3)


torch.manual_seed(0)
stem = nn.Conv2d(1, 4, 3, padding=1)
adder = Adder2d(4, 6, 3)
head = nn.Linear(6, 10)
images, labels = torch.randn(2, 1, 6, 6), torch.tensor([3, 7])
features = adder(stem(images))
logits = head(F.batch_norm(features, None, None, training=True).mean((2, 3)))
loss = F.cross_entropy(logits, labels)
loss.backward()
result = {"loss": loss.detach(), "grads": [stem.weight.grad, adder.weight.grad, head.weight.grad]}
