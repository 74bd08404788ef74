# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 31
# trigger: influence functions for a matrix-factorisation recommender: the Hessian-vector product of
#   the training loss is taken forward-over-reverse, torch.func.jvp(torch.func.grad(loss), ...), and
#   the loss goes through a stable log-sigmoid Function (another file, setup_context style) without jvp
# source: none found; the pattern as users write it (torch.func's forward-over-reverse HVP recipe)
# helpers: lib_mf_ops31.py
# results: hvp, influence
import os
import sys

import torch
from torch.func import grad, jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_mf_ops31 import StableLogSigmoid  # noqa: E402

torch.manual_seed(0)
users, items = torch.tensor([0, 1, 2, 0, 1]), torch.tensor([1, 2, 0, 0, 1])
clicks = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0])
params = {"user": torch.randn(3, 2), "item": torch.randn(3, 2)}


def training_loss(p):
    scores = (p["user"][users] * p["item"][items]).sum(-1)
    return -StableLogSigmoid.apply(clicks * scores).mean()


direction = {name: torch.randn_like(value) for name, value in params.items()}
_, hvp = jvp(grad(training_loss), (params,), (direction,))
influence = sum((hvp[name] * direction[name]).sum() for name in params)
