"""Pairwise energy terms of a small particle model (a library module of the variant
energy_newton_step_through_classic_softplus_function)."""
import torch


class SoftplusBarrier(torch.autograd.Function):
    """Softplus with a hand-written backward, as kept from an older code base."""

    @staticmethod
    def forward(x):  # PRIMARY
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def barrier_energy(positions, weights):
    return SoftplusBarrier.apply(positions @ weights).sum()
