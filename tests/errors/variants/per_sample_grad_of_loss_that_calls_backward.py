# message: backward() called inside a functorch transform. This is not supported, please use
#   functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms.
# code: AD141 (catalogue: func_autograd_grad_inside)
# set: 6
# trigger: per-sample gradients for clipping: the per-sample loss in another file
#   (lib_persample.py), bound to the model with functools.partial, still calls loss.backward()
#   from the training loop it was copied from, and is given to vmap(grad(...))
# source: none found; the pattern as users write it
# helpers: lib_persample.py
# results: per_sample_weight, per_sample_bias
import functools
import os
import sys

import torch
from torch import nn
from torch.func import grad, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_persample import sample_loss  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 1)
params = {name: p.detach() for name, p in model.named_parameters()}
buffers = {name: b.detach() for name, b in model.named_buffers()}
x, y = torch.randn(5, 3), torch.randn(5, 1)
per_sample = vmap(grad(functools.partial(sample_loss, model)), in_dims=(None, None, 0, 0))(params, buffers, x, y)
per_sample_weight, per_sample_bias = per_sample["weight"], per_sample["bias"]
