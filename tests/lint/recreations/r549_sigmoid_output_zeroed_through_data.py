"""A post quoting the PyTorch 0.4 migration discussion of `.data` versus
`.detach()`: `out = a.sigmoid()`, `c = out.data`, `c.zero_()`, then
`out.sum().backward()` -- "a.grad: the result is very, very wrong because
`out` changed!" (with `.detach()` the same write raises instead).  Sigmoid's
backward reads its output, which the write through `.data` has replaced, and
autograd cannot see it.  Re-created as a gating layer whose helper resets the
gate values through `.data` for logging before the loss is backpropagated.
Nothing raises; the gradient is wrong.
Buggy line: `c.zero_()` (a write through `.data` of sigmoid's saved output).
Source: https://e-com-net.com/article/1279942790742032384.htm"""
import torch


def gate(a):
    out = a.sigmoid()
    return out


def reset_for_logging(out):
    c = out.data
    c.zero_()  # missed: ADL001
    return c


def gate_loss_grad(a):
    out = gate(a)
    reset_for_logging(out)
    out.sum().backward()
    return a.grad


def bug_shows():
    """The gradient is 0 where sigmoid'(a) = s(1 - s) is not."""
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    got = gate_loss_grad(a)
    s = torch.sigmoid(torch.tensor([1.0, 2.0, 3.0]))
    return not torch.allclose(got, s * (1 - s))
