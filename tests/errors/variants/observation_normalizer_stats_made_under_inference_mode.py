# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to
#   get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for
#   more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 22
# helpers: lib_obs_normalizer.py
# trigger: a running observation normalizer in a library module is initialised from warm-up rollouts
#   collected under torch.inference_mode() (self.mean = obs.mean(0)); its in-place running update
#   (self.mean.mul_(...).add_(...)) runs later in the training loop under no_grad
# source: none found; the pattern as users write it
# results: policy, losses, norm.mean
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_obs_normalizer import RunningNorm


torch.manual_seed(0)
policy = nn.Linear(3, 2)
with torch.inference_mode():
    warmup = torch.randn(16, 3) * 2 + 1
    norm = RunningNorm(warmup)  # PRIMARY
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
losses = []
for step in range(3):
    obs = torch.randn(8, 3) * 2 + 1
    norm.update(obs)
    loss = policy(norm(obs)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
