"""A forum thread "When inplace operation are allowed and when not": the
answer explains which tensors autograd saves: the derivative of exp(x) is
exp(x), so the output of `u.exp()` is saved and writing into it raises
"one of the variables needed for gradient computation has been modified by
an inplace operation", while writing into `u` (which exp does not need) is
allowed.  The thread's example, as a scoring helper: the exponentiated
scores are summed into the loss, then one score is overwritten before the
backward.
Buggy line: `uexp[0] = 666`.
Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583"""
import torch


def scores_and_loss(t):
    u = 2 * t  # (so it won't be a leaf variable)
    uexp = u.exp()  # uexp is the gradient of u.exp()
    loss = uexp.sum()  # (some dummy loss)
    u[0] = 666  # inplace modification of u: allowed, exp does not save u
    loss.backward(retain_graph=True)
    uexp[0] = 666  # inplace modification of uexp: exp saved its output  # expect: ADL001
    loss.backward()
    return t.grad


def run():
    t = torch.arange(3.0, requires_grad=True)
    scores_and_loss(t)
