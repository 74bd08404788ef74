"""A linear layer with a hand-written backward (written for the bias-free projections)."""
import torch


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        out = x @ weight.t()
        if bias is not None:
            out = out + bias
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_bias = grad_out.sum(0) if ctx.needs_input_grad[2] else None
        return grad_out @ weight, grad_out.t() @ x, grad_bias  # PRIMARY
