"""A factorisation-machine interaction written as one autograd.Function over any number of fields."""
import torch


class PairwiseInteraction(torch.autograd.Function):
    """sum over pairs of fields i < j of <v_i, v_j>, per example."""

    @staticmethod
    def forward(ctx, *fields):
        ctx.save_for_backward(*fields)
        total = torch.stack(fields).sum(0)
        return 0.5 * (total.pow(2) - torch.stack(fields).pow(2).sum(0)).sum(-1)

    @staticmethod
    def backward(ctx, grad):
        fields = ctx.saved_tensors  # PRIMARY
        total = torch.stack(fields).sum(0)
        return tuple(grad[:, None] * (total - field) for field in fields)
