# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 5]], which is output 0 of SoftmaxBackward0, is at version 1;
#   expected version 0 instead. Hint: ...
# code: AD101 (catalogue: saved_tensor_modified)
# set: 24
# trigger: a policy for a game with illegal moves builds torch.distributions.Categorical(logits=...),
#   adds its entropy bonus (the distribution's entropy multiplies by dist.probs, which it saves), then
#   masks the illegal actions with dist.probs.masked_fill_(illegal, 0.0) to pick the greedy move's
#   probability; the write lands in the probabilities the entropy saved
# source: none found; the pattern as users write it (action masking in policy-gradient agents)
# results: policy.weight, policy.bias, losses
import os
import sys

import torch
from torch import nn
from torch.distributions import Categorical

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class MaskedPolicyLoss:
    def __init__(self, entropy_coef=0.01):
        self.entropy_coef = entropy_coef

    def __call__(self, logits, illegal, advantages):
        dist = Categorical(logits=logits)
        entropy = dist.entropy().mean()
        probs = dist.probs
        probs = probs.masked_fill(illegal, 0.0)
        chosen = probs.max(dim=1).values
        return -(torch.log(chosen + 1e-8) * advantages).mean() - self.entropy_coef * entropy


torch.manual_seed(0)
policy = nn.Linear(6, 5)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.randn(4, 6)
illegal = torch.tensor([[False, True, False, False, True],
                        [True, False, False, False, False],
                        [False, False, True, True, False],
                        [False, False, False, False, False]])
advantages = torch.tensor([1.0, -0.5, 0.3, 2.0])
loss_fn = MaskedPolicyLoss()
losses = []
for step in range(3):
    loss = loss_fn(policy(states), illegal, advantages)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
