"""A custom autograd.Function (forward and setup_context apart) mapped with torch.func.vmap: it has
neither a vmap staticmethod nor generate_vmap_rule=True. After
https://github.com/pytorch/pytorch/pull/91787 (the four states of generate_vmap_rule and vmap)."""
import torch
from torch.func import vmap


class SoftClip(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x):
        return x.tanh() * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        return grad_output * (2 - out * out / 2)


xs = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -3.0]], requires_grad=True)
clipped = vmap(SoftClip.apply)(xs)
clipped.sum().backward()
