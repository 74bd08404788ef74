"""Low-precision activation helpers."""
import torch


class CastActivation(torch.autograd.Function):
    """Cast activations to a lower precision; the gradient goes back in the input's precision."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.save_for_backward(x.dtype)  # PRIMARY
        return x.to(dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (input_dtype,) = ctx.saved_tensors
        return grad_output.to(input_dtype), None


def cast_activation(x, dtype=torch.bfloat16):
    return CastActivation.apply(x, dtype)
