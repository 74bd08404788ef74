"""A from-scratch classifier (the "neural net from scratch" pattern of the
PyTorch `nn` tutorial) creates its weights with `requires_grad=True` and
scales them in the same expression, `torch.randn(784, 10,
requires_grad=True) / math.sqrt(784)`.  The division makes `weights` a
non-leaf: `loss.backward()` leaves `weights.grad` as None, and the manual
update `weights -= weights.grad * lr` fails ("unsupported operand type(s)
for *: 'NoneType' and 'float'").  The report: "tensor.grad gives None when
initializing a tensor with requires_grad=True, and multiplying it with a
constant value"; the tutorial sets `requires_grad_()` after the scaling.
Buggy line: `weights = torch.randn(n_in, n_out, requires_grad=True) / math.sqrt(n_in)`.
Expected finding: ADL020 there.
Source: https://github.com/pytorch/pytorch/issues/91851"""
import math

import torch
import torch.nn.functional as F


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def init_params(n_in=784, n_out=10):
    weights = torch.randn(n_in, n_out, requires_grad=True) / math.sqrt(n_in)  # missed: ADL020
    bias = torch.zeros(n_out, requires_grad=True)
    return weights, bias


def fit(x_train, y_train, epochs=1, bs=16, lr=0.5):
    weights, bias = init_params(x_train.shape[1], 10)
    n = x_train.shape[0]
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            xb = x_train[i * bs: i * bs + bs]
            yb = y_train[i * bs: i * bs + bs]
            pred = log_softmax(xb @ weights + bias)
            loss = F.nll_loss(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    return weights, bias


def run():
    torch.manual_seed(0)
    x_train = torch.rand(32, 784)
    y_train = torch.randint(0, 10, (32,))
    fit(x_train, y_train)
