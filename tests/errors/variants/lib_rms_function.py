import torch


class RMSNormFunction(torch.autograd.Function):
    """RMS normalisation with a hand-written backward (saves its input and 1/rms)."""

    @staticmethod
    def forward(x, eps):
        rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        return x * rstd

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, eps = inputs
        ctx.save_for_backward(x, torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    @staticmethod
    def backward(ctx, grad_out):
        x, rstd = ctx.saved_tensors
        n = x.shape[-1]
        dot = (grad_out * x).sum(-1, keepdim=True)
        return rstd * grad_out - x * rstd.pow(3) * dot / n, None


def rms_norm(x, eps=1e-6):
    return RMSNormFunction.apply(x, eps)
