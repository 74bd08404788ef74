# message: vjp(f, ...): output of function f should be a tuple: (output, aux) if has_aux is True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 19
# trigger: an input-gradient robustness probe calls torch.func.vjp(forward_fn, x, has_aux=True); the
#   forward function used to return (logits, features) and now returns the logits alone
# source: none found; the pattern as users write it
# results: saliency
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import vjp


class Probe:
    def __init__(self, model):
        self.model = model

    def forward_fn(self, x):
        return self.model(x)

    def saliency(self, x):
        logits, pullback, _ = vjp(self.forward_fn, x, has_aux=True)  # PRIMARY
        (grad_x,) = pullback(torch.ones_like(logits))
        return grad_x.abs()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
saliency = Probe(model).saliency(torch.randn(2, 3))
