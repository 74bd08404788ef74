"""A pull request to the "What is torch.nn really?" tutorial explains why the
tutorial sets `requires_grad` on `weights` only after the Xavier scaling:
if `requires_grad=True` is given to `randn` and the result is then divided
by `sqrt(n)`, `weights` is the output of a division, not a leaf, so
`backward()` never fills its `.grad`.  Re-created as the tutorial's
from-scratch logistic regression written that way: `log_softmax`, `nll`, a
`model` function, and the hand-written update under `torch.no_grad()`.
Raises a `TypeError` (`None * float`) at the first update.
Buggy line: `weights = torch.randn(784, 10, requires_grad=True) /
math.sqrt(784)` (the parameter is the non-leaf result of the scaling).
Source: https://github.com/pytorch/tutorials/pull/3717"""
import math

import torch


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


def init_params():
    weights = torch.randn(784, 10, requires_grad=True) / math.sqrt(784)  # missed: ADL020
    bias = torch.zeros(10, requires_grad=True)
    return weights, bias


def train(x_train, y_train, epochs=1, bs=16, lr=0.5):
    weights, bias = init_params()

    def model(xb):
        return log_softmax(xb @ weights + bias)

    n = x_train.shape[0]
    for _ in range(epochs):
        for i in range((n - 1) // bs + 1):
            xb = x_train[i * bs:(i + 1) * bs]
            yb = y_train[i * bs:(i + 1) * bs]
            loss = nll(model(xb), yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    return weights, bias


def run():
    torch.manual_seed(0)
    x_train = torch.randn(32, 784)
    y_train = torch.randint(0, 10, (32,))
    train(x_train, y_train)
