"""A tanh-approximated GELU with a hand-written backward (library module of a set 22 variant)."""
import math

import torch

_C = math.sqrt(2.0 / math.pi)


class TanhGelu(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return 0.5 * x * (1.0 + torch.tanh(_C * (x + 0.044715 * x ** 3)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        inner = _C * (x + 0.044715 * x ** 3)
        t = torch.tanh(inner)
        d_inner = _C * (1.0 + 3 * 0.044715 * x ** 2)
        return grad_out * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)
