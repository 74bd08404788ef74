"""A soft quantiser with a hand-written backward."""
import torch


class SoftRound(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x, temperature):
        r = torch.round(x)
        return r + torch.tanh((x - r) / temperature) * 0.5

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, temperature = inputs
        ctx.save_for_backward(x)
        ctx.temperature = temperature

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        t = torch.tanh((x - torch.round(x)) / ctx.temperature)
        return grad_output * 0.5 * (1 - t * t) / ctx.temperature, None
