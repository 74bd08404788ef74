"""A tree reduction copies its inputs into slots of one preallocated buffer
and writes each partial result into the next slot: `tensor[2] =
op(tensor[0], tensor[1])`, `tensor[4] = op(tensor[2], tensor[3])`.  With
`op=torch.add` it works; with `op=torch.mul` the product keeps its operands,
views of the buffer, for backward, and the very write of its result into
the same buffer changes them: `autograd.grad` fails ("one of the variables
needed for gradient computation has been modified by an inplace
operation").  The fix keeps the partial results in separate tensors (or
writes into a buffer the operands are not views of).
Buggy line: `tensor[2] = op(tensor[0], tensor[1])` in `reduce`, with
`op=torch.mul`.
Expected finding: ADL001 there.
Source: https://github.com/pytorch/pytorch/issues/74806"""
import torch
from torch import Tensor


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0], tensor[1])  # missed: ADL001
    tensor[4] = op(tensor[2], tensor[3])
    return tensor[4]


def product_grads(inputs):
    out = reduce(*inputs, op=torch.mul)
    return torch.autograd.grad(out, inputs, torch.ones_like(out))


def run():
    torch.manual_seed(0)
    inputs = [torch.randn((1,), requires_grad=True) for _ in range(3)]
    product_grads(inputs)
