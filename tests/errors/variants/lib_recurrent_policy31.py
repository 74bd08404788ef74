"""Recurrent policy pieces."""
import torch


class ResetFinished(torch.autograd.Function):
    """Zero the state rows of finished episodes, in place (no copy of the state each step)."""

    @staticmethod
    def forward(ctx, state, done):
        state.mul_(1.0 - done[:, None])
        ctx.mark_dirty(state)
        ctx.save_for_backward(done)
        return state

    @staticmethod
    def backward(ctx, grad):
        (done,) = ctx.saved_tensors
        return grad * (1.0 - done[:, None]), None
