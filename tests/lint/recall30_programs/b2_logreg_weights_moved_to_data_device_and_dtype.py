"""Fresh shape for ADL020 (not tuned on): hand-written logistic regression on
float64 data. The weights are made with `requires_grad=True`, then put on the
data's device and dtype with `.to(X.device, dtype=torch.float64)`: the name holds
a float64 copy, a non-leaf, and `w.grad` is None after the backward, so the
update fails ("unsupported operand type(s) for *: 'float' and 'NoneType'")."""
import torch


def train_logreg(X, y, epochs=3, lr=0.5):
    w = torch.zeros(X.shape[1], requires_grad=True)
    w = w.to(X.device, dtype=torch.float64)
    for _ in range(epochs):
        p = torch.sigmoid(X @ w)
        loss = torch.nn.functional.binary_cross_entropy(p, y)
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w


def run():
    torch.manual_seed(0)
    X = torch.randn(20, 3, dtype=torch.float64)
    y = (X[:, 0] > 0).double()
    return train_logreg(X, y)
