"""A memory-light hard-swish with a hand-written backward (usable under torch.func)."""
import torch


class HardSwish(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * (x + 3).clamp(0, 6) / 6

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        slope = torch.where(x < -3, torch.zeros_like(x), torch.where(x > 3, torch.ones_like(x), (2 * x + 3) / 6))
        return grad * slope
