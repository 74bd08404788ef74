"""An autograd walk-through page ends its demo with the update
`w_0 = w_0 - 0.001 * w_0.grad`, outside `torch.no_grad()`.  Run once it is
harmless; put in a training loop, as readers do, `w_0` becomes a non-leaf
result of the previous step, its `.grad` is never filled (PyTorch warns), and
the next update fails on `None`.  Re-created as the page's two-layer
`bmm` / `sigmoid` / `matmul` model turned into a `train` loop with a
`forward` helper.  Raises (TypeError) at the second iteration.
Buggy line: `w_0 = w_0 - 0.001 * w_0.grad` (an update recorded in the graph).
Source: https://coderethan.fun/AI/01_deep_learning_theory/21-pytorch-autograd.html"""
import warnings

import torch


def forward(data0, w_0, w_1):
    data2 = torch.bmm(data0, w_0)
    data3 = torch.sigmoid(data2)
    return torch.matmul(data3, w_1)


def train(steps=3):
    w_0 = torch.randn(2, 4, 3, requires_grad=True)
    w_1 = torch.randn(2, 3, 5, requires_grad=True)
    for _ in range(steps):
        data0 = torch.randn(2, 2, 4)
        output = forward(data0, w_0, w_1)
        loss = output.sum()
        loss.backward()
        w_0 = w_0 - 0.001 * w_0.grad  # expect: ADL020
        w_1 = w_1 - 0.001 * w_1.grad  # expect: ADL020
    return w_0, w_1


def run():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train()
