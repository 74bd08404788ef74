"""PyTorch issue 74874 ("Gradient computation on modified tensor by in-place operator"): a
reduction helper copies its inputs into the slots of a scratch buffer made without gradients,
then writes each partial result into the next slot, `tensor[2] = op(tensor[0], tensor[1])`,
`tensor[4] = op(tensor[2], tensor[3])`, and returns `tensor[4]`.  With `op=torch.add` the
gradients come out; with `op=torch.mul` `torch.autograd.grad` raises "one of the variables
needed for gradient computation has been modified by an inplace operation": `mul` saved the
slot views `tensor[0]` / `tensor[1]` (they share the buffer's version counter) and the write
of its own result into `tensor[2]` bumps that counter.
Re-created with the reporter's helper, its op argument and the anomaly-mode driver.
Buggy line: `tensor[2] = op(tensor[0], tensor[1])` in `reduce`.
Source: https://github.com/pytorch/pytorch/issues/74874"""
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


def grads_of(op, seed=0):
    torch.manual_seed(seed)
    inputs = [torch.randn((1,), requires_grad=True) for _ in range(3)]
    out = reduce(*inputs, op=op)
    return torch.autograd.grad(out, inputs, torch.ones_like(out))


def run():
    grads_of(torch.add)  # the reporter's working case
    return grads_of(torch.mul)  # raises in autograd.grad


if __name__ == "__main__":
    run()
