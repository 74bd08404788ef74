# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# helpers: lib_init_rules.py
# set: 17
# trigger: a model class initialises itself with self.apply(clipped_uniform_init), an init rule from a
#   library module (lib_init_rules.py) that clips each Linear weight with Tensor.apply_ and a Python
#   lambda; nn.Module.apply calls it on every submodule, whose weights require grad
# source: none found; the pattern as users write it (model.apply(init_fn), the usual init idiom)
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_init_rules import clipped_uniform_init  # noqa: E402


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.apply(clipped_uniform_init)

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model = Classifier()
x, y = torch.randn(10, 4), torch.randint(0, 3, (10,))
nn.functional.cross_entropy(model(x), y).backward()
