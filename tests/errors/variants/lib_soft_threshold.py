import torch


class SoftThreshold(torch.autograd.Function):  # PRIMARY
    """Soft thresholding with a straight-through gradient inside the dead zone."""

    @staticmethod
    def forward(x, tau):
        return torch.sign(x) * (x.abs() - tau).clamp_min(0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def soft_threshold(x, tau=0.1):
    return SoftThreshold.apply(x, tau)
