"""A standardisation written as an in-place custom Function (for the variant
standardise_function_on_input_requiring_grad)."""
import torch


class StandardiseInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mean, std = x.mean(), x.std()
        x.sub_(mean).div_(std)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, std)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        z, std = ctx.saved_tensors
        n = z.numel()
        centred = grad_output - grad_output.mean()
        return (centred - z * (grad_output * z).sum() / (n - 1)) / std
