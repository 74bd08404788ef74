"""An answer on why `zero_grad()` is needed (re-posted on flisks.com) shows a
"vanilla gradient descent" alternative to the optimizer: two leaf tensors
`W` and `b` made with `requires_grad=True`, a linear model, and an update
`W -= learning_rate * W.grad.data` written with autograd on.  Re-created as
a small regression script: a `linear_model` helper, a `fit` function looping
over (sample, target) pairs, the update in a `descend` helper, and the
gradients cleared after each update.  Raises "a leaf Variable that requires
grad is being used in an in-place operation" at the first update.
Buggy line: `W -= learning_rate * W.grad.data` (in-place update of a leaf
that requires grad, outside `torch.no_grad()`).
Source: https://flisks.com/python-why-do-we-need-to-call-zero-grad-in-pytorch"""
import torch


def linear_model(x, W, b):
    return torch.matmul(x, W) + b


def descend(W, b, learning_rate):
    W -= learning_rate * W.grad.data
    b -= learning_rate * b.grad.data
    W.grad.data.zero_()
    b.grad.data.zero_()


def fit(data, targets, learning_rate=0.01):
    W = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    for sample, target in zip(data, targets):
        output = linear_model(sample, W, b)
        loss = ((output - target) ** 2).sum()
        loss.backward()
        descend(W, b, learning_rate)  # expect: ADL014
    return W, b


def run():
    torch.manual_seed(0)
    data = torch.randn(5, 4)
    targets = torch.randn(5, 3)
    fit(data, targets)
