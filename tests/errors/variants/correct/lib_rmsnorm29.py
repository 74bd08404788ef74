"""A memory-saving RMS normalisation that overwrites its input."""
import torch


class InplaceRmsNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps=1e-5):
        rms = x.float().pow(2).mean(-1, keepdim=True).add(eps).sqrt()
        x.div_(rms.to(x.dtype))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, rms)
        return x  # PRIMARY

    @staticmethod
    def backward(ctx, grad_out):
        y, rms = ctx.saved_tensors
        y, grad_out = y.float(), grad_out.float()
        return (grad_out - y * (grad_out * y).mean(-1, keepdim=True)) / rms, None
