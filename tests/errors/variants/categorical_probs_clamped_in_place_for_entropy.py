# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 18
# trigger: an exploration bonus reads torch.distributions.Categorical(logits=...).probs (softmax's
#   output, which softmax saved for backward) and clamps it in place before the log, inside a
#   policy class's entropy method called from the training loop
# source: none found; the pattern as users write it (an entropy bonus made "safe" for log)
# results: policy
import os
import sys

import torch
from torch import nn
from torch.distributions import Categorical

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 3)

    def entropy(self, obs):
        dist = Categorical(logits=self.head(obs))
        probs = dist.probs
        probs.clamp_(min=1e-6)  # PRIMARY
        return -(probs * probs.log()).sum(-1).mean()


torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
for _ in range(2):
    obs = torch.randn(5, 4)
    optimizer.zero_grad()
    loss = -0.01 * policy.entropy(obs) + policy.head(obs).pow(2).mean()
    loss.backward()
    optimizer.step()
