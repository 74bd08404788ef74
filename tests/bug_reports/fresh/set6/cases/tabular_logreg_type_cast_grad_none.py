"""Logistic regression on tabular data written with raw tensors and a hand-written SGD update: the
weights are created with `requires_grad=True` from a float64 numpy array and then cast with
`.type(torch.float)`; the cast is a new, non-leaf tensor, its `.grad` stays None, and the update
`w1 - lr * w1.grad` fails.
Source: https://github.com/pytorch/pytorch/issues/10065 ("Why the w1.grad is None?" after
`w1 = w.type(torch.float)`; answer: create the tensor with the right dtype directly,
`torch.tensor(..., requires_grad=True, dtype=torch.float)`).
expect: raises"""
import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)
X = torch.tensor(rng.standard_normal((64, 5)), dtype=torch.float)
y = (X[:, 0] - 0.5 * X[:, 3] > 0).float()
init = rng.standard_normal(5) * 0.01

w = torch.tensor(init, requires_grad=True)
w1 = w.type(torch.float)
b = torch.zeros(1, requires_grad=True)
lr = 0.5
losses = []
for epoch in range(5):
    p = torch.sigmoid(X @ w1 + b)
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    loss.backward()
    with torch.no_grad():
        w1 -= lr * w1.grad
        b -= lr * b.grad
        w1.grad.zero_()
        b.grad.zero_()
    losses.append(loss.detach())
result = {"losses": losses, "w": w1.detach().clone(), "b": b.detach().clone()}
