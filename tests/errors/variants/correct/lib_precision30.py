"""Low-precision activation helpers."""
import torch


class CastActivation(torch.autograd.Function):
    """Cast activations to a lower precision; the gradient goes back in the input's precision."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.input_dtype = x.dtype  # PRIMARY
        return x.to(dtype)

    @staticmethod
    def backward(ctx, grad_output):
        input_dtype = ctx.input_dtype
        return grad_output.to(input_dtype), None


def cast_activation(x, dtype=torch.bfloat16):
    return CastActivation.apply(x, dtype)
