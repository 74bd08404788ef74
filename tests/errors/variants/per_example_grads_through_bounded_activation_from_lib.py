# message: You tried to vmap over BoundedTanh, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 13
# helpers: lib_bounded.py
# trigger: per-example gradients for clipping (DP-SGD style) with vmap(grad(loss)) over a loss whose
#   activation is a custom Function from another file, written with setup_context but without a
#   vmap rule
# source: none found; the pattern as users write it (per-sample gradients through library activations)
# results: per_example, clipped_mean
import os
import sys

import torch
from torch.func import grad, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_bounded import bounded_tanh  # noqa: E402


def example_loss(weight, x, y):
    prediction = bounded_tanh(x @ weight)
    return (prediction - y).pow(2).sum()


torch.manual_seed(0)
weight = torch.randn(3, 2)
xs, ys = torch.randn(5, 3), torch.randn(5, 2)
per_example = vmap(grad(example_loss), in_dims=(None, 0, 0))(weight, xs, ys)
norms = per_example.flatten(1).norm(dim=1).clamp_min(1.0)
clipped_mean = (per_example / norms[:, None, None]).mean(dim=0)
