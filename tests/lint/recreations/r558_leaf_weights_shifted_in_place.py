"""A page on in-place versus out-of-place operations and autograd: "This
error often happens when you try to modify a tensor that is a leaf variable
in place ... When you perform an in-place operation (like x += 1 or
x.add_(1)) on a leaf variable, it can corrupt the graph" -- `x =
torch.tensor([1.0, 2.0], requires_grad=True)`, `x.add_(1)` raises "a leaf
Variable that requires grad is being used in an in-place operation".
Re-created as a hand-rolled linear model whose `warm_start` helper shifts
its weight leaf in place before training.  Raises.
Buggy line: `self.weight.add_(offset)`.
Source: https://runebook.dev/en/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.backward"""
import torch


class HandLinear:
    def __init__(self, n):
        self.weight = torch.zeros(n, requires_grad=True)
        self.bias = torch.zeros(1, requires_grad=True)

    def warm_start(self, offset):
        self.weight.add_(offset)  # expect: ADL014
        return self

    def __call__(self, x):
        return x @ self.weight + self.bias


def fit(x, y, offset=1.0):
    model = HandLinear(x.shape[1]).warm_start(offset)
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return model.weight.grad


def run():
    torch.manual_seed(0)
    fit(torch.randn(5, 2), torch.randn(5))
