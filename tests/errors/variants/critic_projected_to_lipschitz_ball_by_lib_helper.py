# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 23
# helpers: lib_lipschitz23.py
# trigger: a critic's layers are kept 1-Lipschitz after every optimizer step by a helper in a library
#   module that estimates the weight's spectral norm by power iteration and divides the weight by it
#   in place (layer.weight.div_(sigma)), written without torch.no_grad()
# source: none found; the pattern as users write it
# results: critic[0].weight, critic[2].weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_lipschitz23 import lipschitz_project  # noqa: E402

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(critic.parameters(), lr=0.5)
vectors = {0: torch.nn.functional.normalize(torch.ones(8), dim=0), 2: torch.nn.functional.normalize(torch.ones(1), dim=0)}
losses = []
for step in range(3):
    real, fake = torch.randn(6, 4) + 1.0, torch.randn(6, 4)
    loss = critic(fake).mean() - critic(real).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for index in (0, 2):
        vectors[index] = lipschitz_project(critic[index], vectors[index])
    losses.append(loss.detach())
