"""A page on autograd's memory handling and in-place operations around
`torch.autograd.function.InplaceFunction.save_for_backward` (Russian
edition) warns: if you saved a tensor with `ctx.save_for_backward` and then
changed its contents in place before `backward` ran, the gradients would be
wrong, and PyTorch usually raises thanks to its version tracking; its
example is a custom Function that squares its input.  Re-created as an
energy head using such a `Square` Function on a projection, whose forward
then centres the projection in place to build a second term.  Raises at
`backward` ("modified by an inplace operation").
Buggy line: `z -= z.mean(dim=1, keepdim=True)` (the input saved by
`Square.forward` is overwritten).
Source: https://runebook.dev/ru/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.save_for_backward"""
import torch
import torch.nn as nn


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


class EnergyHead(nn.Module):
    def __init__(self, d_in=6, d=4):
        super().__init__()
        self.proj = nn.Linear(d_in, d)

    def forward(self, h):
        z = self.proj(h)
        energy = Square.apply(z).sum(dim=1)
        z -= z.mean(dim=1, keepdim=True)  # expect: ADL001
        spread = z.abs().sum(dim=1)
        return energy + spread


def run():
    torch.manual_seed(0)
    head = EnergyHead()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
    h = torch.randn(5, 6)
    target = torch.randn(5)
    optimizer.zero_grad()
    loss = ((head(h) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
