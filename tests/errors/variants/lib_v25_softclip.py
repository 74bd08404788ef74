"""A soft clipping activation with a hand-written backward (cheaper than autograd's for the fused
expression), usable under torch.func transforms."""
import torch


class SoftClip(torch.autograd.Function):  # PRIMARY
    generate_vmap_rule = True

    @staticmethod
    def forward(x, bound):
        return bound * torch.tanh(x / bound)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, bound = inputs
        ctx.bound = bound
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (output,) = ctx.saved_tensors
        return grad_output * (1 - (output / ctx.bound) ** 2), None


def soft_clip(x, bound=3.0):
    return SoftClip.apply(x, bound)
