"""`F.relu(x, inplace=True)` on the leaf input that requires grad.
Source: https://github.com/pytorch/pytorch/issues/727"""
import torch
import torch.nn.functional as F


def run():
    x = torch.randn(4, 6, requires_grad=True)
    x = F.relu(x, inplace=True)  # expect: ADL014
    x = F.dropout(x, p=0.1, inplace=True)  # expect: ADL001
    x.sum().backward()
