"""softplus with a hand-written backward (library module of a set 22 variant)."""
import torch


class StableSoftplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):  # PRIMARY
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * torch.sigmoid(x)
