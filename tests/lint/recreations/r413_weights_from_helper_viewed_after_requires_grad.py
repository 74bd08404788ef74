"""A regression written with hand-made weights gets them from a helper,
`init_weight`, that creates the leaf with `requires_grad=True` and returns
its reshaped view, `.view(n_in, n_out)`.  The training loop's manual update
reads `w.grad`, which is None for the view (gradients are kept on leaves
only): the update raises a TypeError.  The report created `b = Variable(...,
requires_grad=True).view(3, 1)` and printed `b.grad`.  The fix views first,
then asks for gradients on the result.
Buggy line: `w -= lr * w.grad` in `fit`.
Source: https://github.com/pytorch/pytorch/issues/1479"""
import torch


def init_weight(n_in, n_out):
    return torch.randn(n_in * n_out, requires_grad=True).view(n_in, n_out)


def fit(x, y, lr=0.1, steps=2):
    w = init_weight(x.size(1), y.size(1))
    for _ in range(steps):
        loss = ((x.mm(w) - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad  # expect: ADL020
    return w


def run():
    torch.manual_seed(0)
    fit(torch.randn(4, 3), torch.randn(4, 1))
