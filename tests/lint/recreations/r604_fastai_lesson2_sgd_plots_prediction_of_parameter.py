"""fast.ai course v3, lesson 2 notebook `lesson2-sgd.ipynb`: linear
regression fitted by hand with SGD.  The coefficients are a parameter,
`a = nn.Parameter(tensor(-1., 1))`; `update()` computes the MSE, calls
`loss.backward()` and steps `a` under `torch.no_grad()`.  The notebook then
plots the fit with `plt.scatter(x[:, 0], x@a)` (and the animation's
`line.set_ydata(x@a)`); `x@a` requires grad, so matplotlib's conversion
fails with "Can't call numpy() on Variable that requires grad.  Use
var.detach().numpy() instead."  The fix merged into the course: plot
`x@a.detach()` (another report wraps the plotting in `torch.no_grad()`).
Re-created as the notebook's cells (`x`, `y`, `mse`, `update`, the
training loop, the plot), with the plotting call's array conversion
(`np.asarray`) in place of matplotlib.  Raises at the plot.
Buggy line: `plot(x[:, 0], x@a)` (the prediction of the parameter, still
requiring grad, handed to numpy).
Source: https://github.com/fastai/course-v3/issues/455 and the fix
https://github.com/fastai/course-v3/pull/521"""
import numpy as np
import torch
from torch import nn

n = 100


def plot(xs, ys):
    """Stand-in for plt.scatter: matplotlib converts both arguments to arrays."""
    return np.asarray(xs), np.asarray(ys)  # expect: ADL036


def mse(y_hat, y):
    return ((y_hat - y) ** 2).mean()


def run():
    torch.manual_seed(0)
    x = torch.ones(n, 2)
    x[:, 0].uniform_(-1., 1)
    a = torch.tensor([3., 2])
    y = x @ a + torch.rand(n)
    a = nn.Parameter(torch.tensor([-1., 1]))

    def update():
        y_hat = x @ a
        loss = mse(y, y_hat)
        loss.backward()
        with torch.no_grad():
            a.sub_(lr * a.grad)
            a.grad.zero_()

    lr = 1e-1
    for t in range(100):
        update()
    plot(x[:, 0], y)
    plot(x[:, 0], x @ a)  # the buggy call: ADL036 reports where plot() converts it
