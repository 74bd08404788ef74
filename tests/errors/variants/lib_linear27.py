"""A hand-written linear Function for function_backward_helpers_each_unpack_saved_tensors_under_checkpoint."""
import torch


class SavedLinear(torch.autograd.Function):
    """x @ weight.T, with the two gradients computed by helper methods."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.t()

    @staticmethod
    def _grad_input(ctx, grad_output):
        _, weight = ctx.saved_tensors
        return grad_output @ weight

    @staticmethod
    def _grad_weight(ctx, grad_output):
        x, _ = ctx.saved_tensors  # PRIMARY
        return grad_output.flatten(0, -2).t() @ x.flatten(0, -2)

    @staticmethod
    def backward(ctx, grad_output):
        return SavedLinear._grad_input(ctx, grad_output), SavedLinear._grad_weight(ctx, grad_output)
