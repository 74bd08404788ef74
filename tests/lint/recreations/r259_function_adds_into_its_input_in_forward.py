"""To save memory, a custom autograd `Function` adds a learned bias into a
slice of its input in place and returns the input, `a[1:2] += b; return a`,
without `ctx.mark_dirty(a)`.  Applied to the output of a sigmoid gate (which
`sigmoid` keeps for its backward), the in-place add overwrites what the
sigmoid saved, and `loss.backward()` fails ("one of the variables needed for
gradient computation has been modified by an inplace operation ... output 0
of SigmoidBackward0").  The fix clones the input in `forward` (or adds out
of place).
Buggy line: `a[1:2] += b` in `InPlaceAdd.forward`.
Expected finding: ADL001 there.
Source: https://github.com/pytorch/pytorch/issues/5871"""
import torch
import torch.nn as nn
from torch.autograd import Function


class InPlaceAdd(Function):
    @staticmethod
    def forward(ctx, a, b):
        a[1:2] += b  # expect: ADL001
        return a

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output[1:2].sum(0, keepdim=True)


add_in_place = InPlaceAdd.apply


class GatedBias(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.zeros(1, dim))

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        return add_in_place(g, self.bias)


def run():
    torch.manual_seed(0)
    model = GatedBias()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(3, 4)).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
