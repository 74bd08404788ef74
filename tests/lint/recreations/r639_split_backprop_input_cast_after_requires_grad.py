"""An issue on PyTorch reports a failure to get the gradient of an input
through a model split in two parts that are backpropagated separately: the
input is made with `torch.randn(2, 2, requires_grad=True).cuda(0)`, the
first part's output is detached and marked `requires_grad_()` as the second
part's input, the second part is backpropagated, then the first part with
`h1.backward(gradient=h2.grad)`, and `x.grad` is `None`: the moved tensor is
a copy made by an op, not a leaf (the maintainers' answer).  Re-created with
a cast to double instead of a move to the GPU (also a differentiable copy),
the two `nn.Sequential` parts, and an input-optimisation step that uses
`x.grad`.  Raises a `TypeError` at the update (`x.grad` is `None`).
Buggy line: `x = torch.randn(2, 2, requires_grad=True).to(torch.float64)`
(the tensor kept is not the leaf), read at `x.grad`.
Source: https://github.com/pytorch/pytorch/issues/8287"""
import torch
import torch.nn as nn


def split_backward(l1, l2, loss_func, x, t):
    h1 = l1(x)
    h2 = h1.detach().requires_grad_()
    h3 = l2(h2)
    loss = loss_func(h3, t)
    loss.backward()
    h1.backward(gradient=h2.grad)
    return loss.item()


def run():
    torch.manual_seed(0)
    x = torch.randn(2, 2, requires_grad=True).to(torch.float64)
    t = torch.randn(2, 2, dtype=torch.float64)
    loss_func = nn.MSELoss()
    l1 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).double()
    l2 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).double()
    for _ in range(2):
        split_backward(l1, l2, loss_func, x, t)
        with torch.no_grad():
            x -= 0.1 * x.grad  # expect: ADL020
