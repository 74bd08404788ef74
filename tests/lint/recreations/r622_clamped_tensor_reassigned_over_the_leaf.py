"""PyTorch issue "clamp makes grad None": the user creates
`a = torch.rand(1, requires_grad=True)`, then writes `a = torch.clamp(a, 0, 1)`
and later reads `a.grad` after `backward()`: it is None.  The name now holds
the clamp's output, a non-leaf, whose gradient is not kept; the leaf that
does get the gradient is no longer reachable (maintainer: keep the leaf and
use `b = torch.clamp(a, 0, 1)`).  Re-created as a small fitting loop that
clamps its parameter into range before use; `bug_shows()` is True when the
gradient it reads is None (so the update is skipped).
Buggy line: `w = torch.clamp(w, 0, 1)` in `fit`.
Source: https://github.com/pytorch/pytorch/issues/6991"""
import torch


def fit(target, lr=0.5):
    """One gradient step on a weight that must stay in [0, 1]."""
    w = torch.rand(1, requires_grad=True)
    w = torch.clamp(w, 0, 1)  # the bug; ADL020 reports it at the read of `w.grad` (line 20)
    loss = (2 * w - target).pow(2).sum()
    loss.backward()
    grad = w.grad  # expect: ADL020
    if grad is not None:
        with torch.no_grad():
            w -= lr * grad
    return grad


def bug_shows():
    torch.manual_seed(0)
    return fit(torch.tensor([1.5])) is None
