"""Normalising-flow layers."""
import torch
from torch import nn


class InplaceAffine(torch.autograd.Function):
    """y = x * exp(s) + t written into x (no copy of the activations); also returns log|det| of the map."""

    @staticmethod
    def forward(ctx, x, log_scale, shift):
        x.mul_(log_scale.exp()).add_(shift)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, log_scale, shift)
        return x, log_scale.sum(1)

    @staticmethod
    def backward(ctx, grad_y, grad_logdet):
        y, log_scale, shift = ctx.saved_tensors
        grad_log_scale = grad_y * (y - shift) + grad_logdet.unsqueeze(1)
        return grad_y * log_scale.exp(), grad_log_scale, grad_y


class AffineCoupling(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.half = features // 2
        self.net = nn.Linear(self.half, 2 * (features - self.half))

    def forward(self, x):
        x = x.clone()
        log_scale, shift = self.net(x[:, :self.half].clone()).chunk(2, dim=1)
        _, logdet = InplaceAffine.apply(x[:, self.half:], torch.tanh(log_scale), shift)  # PRIMARY
        return x, logdet
