"""A custom autograd.Function (an activation written with its own backward) given to
torch.func.jvp for a directional derivative: forward-mode AD needs the Function's own `jvp`
staticmethod, which it lacks. The pattern as users write it (reported for a library's Functions in
https://github.com/flatironinstitute/pytorch-finufft/issues/110)."""
import torch
from torch.func import jvp


class SoftCube(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x):
        return x ** 3 / 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x ** 2


x = torch.tensor([0.5, -1.0, 2.0])
direction = torch.tensor([1.0, 0.0, 1.0])
value, directional = jvp(SoftCube.apply, (x,), (direction,))
