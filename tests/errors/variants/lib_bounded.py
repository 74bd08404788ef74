"""A bounded activation with its own backward, used by per_example_grads_through_bounded_activation_from_lib."""
import torch


class BoundedTanh(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x):
        return torch.tanh(x) * 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (3 - out * out / 3)


def bounded_tanh(x):
    return BoundedTanh.apply(x)
