"""A memory-saving in-place L2 normalisation for qk_norm_function_on_chunk_of_fused_qkv_projection."""
import torch


class InplaceL2Normalize(torch.autograd.Function):
    """Divides x by its L2 norm over the last dimension in place; returns x and the norms."""

    @staticmethod
    def forward(ctx, x, eps=1e-6):
        norms = x.norm(dim=-1, keepdim=True).clamp_min(eps)
        x.div_(norms)
        ctx.mark_dirty(x)
        ctx.mark_non_differentiable(norms)
        ctx.save_for_backward(x, norms)
        return x, norms

    @staticmethod
    def backward(ctx, grad_output, grad_norms):
        unit, norms = ctx.saved_tensors
        return (grad_output - unit * (unit * grad_output).sum(-1, keepdim=True)) / norms, None
