# message: You are attempting to call Tensor.requires_grad_() (or perhaps using
#   torch.autograd.functional.* APIs) inside of a function being transformed by a functorch
#   transform. This is unsupported, please attempt to use the functorch transforms (e.g.
#   torch.func.vjp, torch.func.jacrev, torch.func.vmap) instead.
# code: AD141 (catalogue: func_requires_grad_inside_grad)
# set: 13
# trigger: a score-matching loss needs the trace of each example's Hessian of an energy; the
#   per-example function calls torch.autograd.functional.hessian and is mapped with torch.func.vmap
# source: none found; the pattern as users write it (autograd.functional helpers inside vmap)
# results: traces
import torch
from torch.autograd.functional import hessian
from torch.func import vmap


def energy(x):
    return (x.pow(4) / 4 - x.pow(2)).sum() + x[0] * x[1]


def hessian_trace(x):
    return hessian(energy, x).diagonal().sum()  # PRIMARY


torch.manual_seed(0)
points = torch.randn(5, 2)
traces = vmap(hessian_trace)(points)
