"""A custom autograd.Function written with forward(ctx, ...) used under torch.func.grad: functorch
needs forward and setup_context apart. After https://github.com/Dao-AILab/flash-attention/issues/2071
and https://github.com/linkedin/Liger-Kernel/pull/1184 (Functions with forward(ctx, ...) under
torch.func.grad_and_value)."""
import torch
from torch.func import grad


class ScaledCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):  # PRIMARY
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3 * ctx.scale * x ** 2 * grad_output, None


def energy(x):
    return ScaledCube.apply(x, 0.5).sum()


x = torch.tensor([0.5, -1.0, 2.0])
gx = grad(energy)(x)
