"""An issue on PyTorch reports that a hand-written linear regression stops
working when the update under `torch.no_grad()` is written `w = w - lr *
w.grad` instead of `w -= lr * w.grad`: the new `w` is made under no_grad, so
it no longer requires grad, and the next iteration's `backward()` raises
"element 0 of tensors does not require grad and does not have a grad_fn".
Re-created as the report's script: data `X`, `Y`, a scalar weight with
`requires_grad=True`, `predict` and `loss` helpers, and a training loop.
Raises at the second iteration's backward.
Buggy line: `w = w - lr * w.grad` inside `with torch.no_grad():` (rebinds the
trained weight to a tensor without autograd).
Source: https://github.com/pytorch/pytorch/issues/74158"""
import torch


def predict(w, x):
    return w * x


def loss1(y, y_pred):
    return ((y_pred - y) ** 2).mean()


def run():
    X = torch.tensor([1, 2, 3, 4], dtype=torch.float32)
    Y = torch.tensor([2, 4, 6, 8], dtype=torch.float32)
    w = torch.tensor(0.0, dtype=torch.float32, requires_grad=True)
    lr = 0.01
    for epoch in range(1, 4):
        y_pred = predict(w, X)
        l = loss1(Y, y_pred)
        l.backward()
        with torch.no_grad():
            w = w - lr * w.grad  # expect: ADL020
        if epoch % 20 == 0:
            print(f"epoch {epoch}: w = {w.item():.3f}, loss = {l.item():.8f}")
