"""Message passing written as one autograd.Function, edges processed in chunks to bound memory."""
import torch


class ChunkedAggregate(torch.autograd.Function):
    """out[dst] += weight * h[src] over the edges, in chunks of `chunk` edges."""

    @staticmethod
    def forward(ctx, h, weight, src, dst, chunk):
        ctx.save_for_backward(h, weight, src, dst)
        ctx.chunk = chunk
        out = torch.zeros_like(h)
        for start in range(0, src.numel(), chunk):
            s, d = src[start:start + chunk], dst[start:start + chunk]
            out.index_add_(0, d, weight[start:start + chunk, None] * h[s])
        return out

    @staticmethod
    def backward(ctx, grad_out):
        h, weight, src, dst = ctx.saved_tensors  # PRIMARY
        grad_h, grad_weight = torch.zeros_like(h), torch.zeros_like(weight)
        for start in range(0, src.numel(), ctx.chunk):
            s, d = src[start:start + ctx.chunk], dst[start:start + ctx.chunk]
            grad_h.index_add_(0, s, weight[start:start + ctx.chunk, None] * grad_out[d])
            grad_weight[start:start + ctx.chunk] = (grad_out[d] * h[s]).sum(1)
        return grad_h, grad_weight, None, None, None
