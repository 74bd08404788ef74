"""Correct twin of b2: the weights are made in float64 and marked there; `w` is
the leaf and the update uses its gradient (the help's version)."""
import torch


def train_logreg(X, y, epochs=3, lr=0.5):
    w = torch.zeros(X.shape[1]).to(X.device, dtype=torch.float64).requires_grad_()
    for _ in range(epochs):
        p = torch.sigmoid(X @ w)
        loss = torch.nn.functional.binary_cross_entropy(p, y)
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
    return w


def run():
    torch.manual_seed(0)
    X = torch.randn(20, 3, dtype=torch.float64)
    y = (X[:, 0] > 0).double()
    return train_logreg(X, y)
