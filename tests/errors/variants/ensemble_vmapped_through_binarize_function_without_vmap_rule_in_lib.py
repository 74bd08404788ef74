# message: You tried to vmap over BinarizeSTE, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 21
# trigger: an ensemble of binarised classifiers is evaluated with torch.func.stack_module_state and
#   torch.vmap over functional_call; the binarisation is a setup_context Function in a library module
#   with a backward but neither a vmap staticmethod nor generate_vmap_rule
# source: none found; the pattern as users write it (model ensembling with torch.func)
# helpers: lib_binarize.py
# results: logits
import os
import sys

import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_binarize import BinarizeSTE  # noqa: E402


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(4, 6)
        self.second = nn.Linear(6, 3)

    def forward(self, x):
        return self.second(BinarizeSTE.apply(self.first(x)))


torch.manual_seed(0)
members = [Classifier() for _ in range(3)]
params, buffers = stack_module_state(members)
base = copy.deepcopy(members[0]).to("meta")
x = torch.randn(5, 4)


def member_logits(p, b):
    return functional_call(base, (p, b), (x,))


logits = torch.vmap(member_logits)(params, buffers)
