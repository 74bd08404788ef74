"""A smooth pair repulsion written as a custom Function (memory-light backward)."""
import torch


class SoftRepulsion(torch.autograd.Function):  # PRIMARY
    generate_vmap_rule = True

    @staticmethod
    def forward(distance):
        return torch.nn.functional.softplus(1.0 - distance)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (distance,) = inputs
        ctx.save_for_backward(distance)
        ctx.save_for_forward(distance)

    @staticmethod
    def jvp(ctx, tangent):
        (distance,) = ctx.saved_tensors
        return -tangent * torch.sigmoid(1.0 - distance)

    @staticmethod
    def backward(ctx, grad_out):
        (distance,) = ctx.saved_tensors
        return -grad_out * torch.sigmoid(1.0 - distance)
