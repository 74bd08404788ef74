"""Gradient scaling layer (scales the gradient flowing back, identity forward)."""
import torch


class ScaleGradient(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, scale):  # PRIMARY
        return x.view_as(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.scale = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


def scale_gradient(x, scale):
    return ScaleGradient.apply(x, scale)
