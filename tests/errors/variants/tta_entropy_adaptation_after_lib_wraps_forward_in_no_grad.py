# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 27
# trigger: a served classifier adapts at test time (TENT-like): only the affine parameters of its
#   BatchNorm layers train, by the entropy of its predictions on each test batch; a serving helper in
#   another file had re-bound the model's forward as torch.no_grad()(model.forward), so the entropy has
#   no history
# source: none found; the pattern as users write it (no_grad applied by assignment to an instance's
#   forward, then test-time adaptation on the same instance)
# helpers: lib_deploy27.py
# results: entropies, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_deploy27 import prepare_for_serving  # noqa: E402


def configure_tent(model):
    model.train()  # batch statistics of the test batch, as TENT does
    adapted = []
    for module in model.modules():
        if isinstance(module, nn.BatchNorm1d):
            adapted += [module.weight, module.bias]
    for p in model.parameters():
        p.requires_grad_(any(p is q for q in adapted))
    return torch.optim.SGD(adapted, lr=0.01)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
model = prepare_for_serving(model)
optimizer = configure_tent(model)
entropies = []
for _ in range(3):
    probabilities = model(torch.randn(16, 5) + 0.5).softmax(-1)
    entropy = -(probabilities * probabilities.log()).sum(-1).mean()
    optimizer.zero_grad()
    entropy.backward()
    optimizer.step()
    entropies.append(entropy.item())
