# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 18
# trigger: a curvature regulariser takes the Hessian of a scalar score with respect to one input
#   with torch.func.hessian; the scorer's forward wraps its encoder in
#   torch.utils.checkpoint.checkpoint(use_reentrant=False) to save memory in training
# source: none found; the pattern as users write it
# results: h
import os
import sys

import torch
from torch import nn
from torch.func import hessian
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = checkpoint(self.encoder, x, use_reentrant=False)  # PRIMARY
        return self.head(h).sum()


torch.manual_seed(0)
scorer = Scorer()
h = hessian(scorer)(torch.randn(3))
