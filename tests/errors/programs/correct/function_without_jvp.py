"""The correct version of function_without_jvp: the Function has its jvp staticmethod (the
directional derivative x**2 * tangent, the derivative backward applies, element by element)."""
import torch
from torch.func import jvp


class SoftCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3 / 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x ** 2

    @staticmethod
    def jvp(ctx, x_tangent):
        (x,) = ctx.saved_tensors
        return x_tangent * x ** 2


x = torch.tensor([0.5, -1.0, 2.0])
direction = torch.tensor([1.0, 0.0, 1.0])
value, directional = jvp(SoftCube.apply, (x,), (direction,))
