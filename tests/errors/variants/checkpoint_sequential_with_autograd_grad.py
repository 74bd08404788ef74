# message: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward().
# code: AD126 (catalogue: checkpoint_reentrant_grad)
# trigger: checkpoint_sequential (not checkpoint) with use_reentrant=True, then an input
#   gradient by torch.autograd.grad for a gradient penalty
# source: none found; the pattern as users write it
# results: gx
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
x = torch.randn(4, 3, requires_grad=True)
out = checkpoint_sequential(model, 2, x, use_reentrant=True)  # PRIMARY
(gx,) = torch.autograd.grad(out.sum(), x)
