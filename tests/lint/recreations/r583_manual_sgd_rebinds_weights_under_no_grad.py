"""A notes page on common PyTorch mistakes: in a hand-written gradient
descent, `w = w - lr * w.grad` inside `torch.no_grad()` binds `w` to a new
tensor made with gradients off, so from the next iteration on nothing in the
loss requires grad and `loss.backward()` raises "element 0 of tensors does
not require grad".  (The page's fix is the in-place `w -= lr * w.grad`.)
Re-created as a small linear-regression trainer: a `LinearRegression` holder
with `w` and `b`, a `mse` helper, and a `fit` loop that updates both by
rebinding.  Raises at the second epoch.
Buggy line: `w = w - lr * w.grad` (rebinding under no_grad).
Source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors"""
import torch


def mse(pred, target):
    return ((pred - target) ** 2).mean()


def make_data(n=32):
    x = torch.randn(n, 3)
    true_w = torch.tensor([[1.0], [-2.0], [0.5]])
    return x, x @ true_w + 0.3


def fit(x, y, epochs=3, lr=0.1):
    w = torch.zeros(3, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for epoch in range(epochs):
        pred = x @ w + b
        loss = mse(pred, y)
        loss.backward()
        with torch.no_grad():
            w = w - lr * w.grad  # expect: ADL020
            b = b - lr * b.grad  # expect: ADL020
    return w, b


def run():
    torch.manual_seed(0)
    x, y = make_data()
    fit(x, y)
