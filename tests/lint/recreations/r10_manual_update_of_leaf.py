"""A hand-written gradient step on a leaf that requires grad, outside no_grad.
Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2"""
import torch


def run(lr=0.1):
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    loss = (w * x).sum()
    loss.backward()
    w -= lr * w.grad  # expect: ADL014
