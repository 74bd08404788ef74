"""A deep-learning notes repository records "RuntimeError: a leaf Variable
that requires grad is being used in an in-place operation": a tensor made
with `requires_grad=True` (a leaf) is shifted with `x += 1`.  PyTorch
refuses in-place writes to a leaf that requires grad outside `no_grad`; the
notes' fixes are `x2 = x.clone(); x2 += 1` (differentiable) or the write
under `torch.no_grad()` (not recorded).  Here the leaf is an input whose
gradient is wanted (a saliency-style setup), shifted in place by a
preprocessing helper.
Buggy line: `x += shift` on the leaf.
Source: https://github.com/lhycms/Deep_Learning_Notes"""
import torch
import torch.nn as nn


def preprocess(x, shift=1.0):
    x += shift
    return x


def input_saliency(model, values):
    x = torch.tensor(values, requires_grad=True)
    y = model(preprocess(x))  # expect: ADL014
    y.sum().backward()
    return x.grad


def run():
    torch.manual_seed(0)
    input_saliency(nn.Linear(3, 1), [1.0, 2.0, 3.0])
