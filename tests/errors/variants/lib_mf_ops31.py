"""Numerically stable pieces of a matrix-factorisation recommender."""
import torch


class StableLogSigmoid(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x):
        return -torch.nn.functional.softplus(-x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.sigmoid(-x)
