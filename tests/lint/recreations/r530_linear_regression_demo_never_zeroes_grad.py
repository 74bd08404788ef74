"""A PyTorch learning repository's linear-regression demo fits `y = w x + b`
with hand-written updates `w.data.sub_(lr * w.grad)` after `loss.backward()`
and never clears `w.grad` / `b.grad`: "The loss is not always decreasing,
even lr is very small 1e-6 ... because the code should manually add a line
`w.grad.data.zero_()` `b.grad.data.zero_()` to zero the grad" (fixed by the
author).  Each update applies the sum of every gradient so far.  Nothing
raises.
Buggy lines: `b.data.sub_(lr * b.grad)` and `w.data.sub_(lr * w.grad)`, which
read gradients that nothing in the loop clears.
Source: https://github.com/greebear/pytorch-learning/issues/1"""
import torch


def make_data(n=20):
    x = torch.rand(n, 1) * 10
    y = 2 * x + (5 + torch.randn(n, 1))
    return x, y


def fit(x, y, lr=0.01, iterations=3, record=None):
    w = torch.randn((1), requires_grad=True)
    b = torch.zeros((1), requires_grad=True)
    for iteration in range(iterations):
        wx = torch.mul(w, x)
        y_pred = torch.add(wx, b)
        loss = (0.5 * (y - y_pred) ** 2).mean()
        if record is not None:
            record.append(None if w.grad is None else w.grad.clone())
        loss.backward()
        b.data.sub_(lr * b.grad)  # expect: ADL018
        w.data.sub_(lr * w.grad)  # expect: ADL018
        if iteration % 20 == 0:
            print(iteration, loss.item())
    return w, b


def bug_shows():
    """Before the second backward w.grad still holds the first gradient."""
    torch.manual_seed(0)
    record = []
    fit(*make_data(), record=record)
    return record[1] is not None and record[1].abs().item() > 0
