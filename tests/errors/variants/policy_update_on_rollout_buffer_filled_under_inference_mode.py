# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a
#   normal tensor and use it in autograd, or use `torch.no_grad()` instead of
#   `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 23
# helpers: lib_rollout23.py
# trigger: an on-policy agent's rollout buffer class (library module) collects observations inside
#   torch.inference_mode() while acting; the policy-gradient update re-evaluates the policy MLP on the
#   stacked buffer, and its first nn.Linear saves the observations for backward
# source: none found; the pattern as users write it
# results: policy[0].weight, policy[2].weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_rollout23 import RolloutBuffer  # noqa: E402

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
generator = torch.Generator().manual_seed(3)
losses = []
for iteration in range(2):
    buffer = RolloutBuffer()
    buffer.collect(policy, 5, generator)
    observations, actions, returns = buffer.batch()
    log_probs = torch.log_softmax(policy(observations), dim=1).gather(1, actions[:, None]).squeeze(1)
    loss = -(log_probs * returns).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
