"""softplus with a hand-written backward (library module of a set 22 variant)."""
import torch


class StableSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # PRIMARY
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)
