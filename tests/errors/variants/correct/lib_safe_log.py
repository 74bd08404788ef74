import torch


class SafeLog(torch.autograd.Function):
    """log(x) with the gradient clipped near 0, written the classic way."""

    @staticmethod
    def forward(x, floor):  # PRIMARY
        return x.clamp_min(floor).log()

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, floor = inputs
        ctx.save_for_backward(x)
        ctx.floor = floor

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out / x.clamp_min(ctx.floor), None


def safe_log(x, floor=1e-4):
    return SafeLog.apply(x, floor)
