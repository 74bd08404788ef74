# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 31
# trigger: a recurrent RL policy learns its initial hidden state (an nn.Parameter of shape
#   (envs, hidden)); each step a hand-written Function (another file) zeroes the rows of finished
#   episodes in place with mark_dirty, and at the first step it is given the parameter itself
# source: none found; the pattern as users write it (a learned initial state with in-place resets)
# helpers: lib_recurrent_policy31.py
# results: losses, policy
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_recurrent_policy31 import ResetFinished  # noqa: E402


class RecurrentPolicy(nn.Module):
    def __init__(self, envs=3, observation=4, hidden=5, actions=2):
        super().__init__()
        self.initial_state = nn.Parameter(torch.zeros(envs, hidden))
        self.cell = nn.GRUCell(observation, hidden)
        self.head = nn.Linear(hidden, actions)

    def rollout(self, observations, dones):
        state = self.initial_state
        logits = []
        for observation, done in zip(observations, dones):
            state = ResetFinished.apply(state, done)  # PRIMARY
            state = self.cell(observation, state)
            logits.append(self.head(state))
        return torch.stack(logits)


torch.manual_seed(0)
policy = RecurrentPolicy()
optimizer = torch.optim.Adam(policy.parameters(), lr=0.01)
observations = torch.randn(4, 3, 4)
dones = torch.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
actions = torch.tensor([[0, 1, 1], [1, 0, 1], [0, 0, 1], [1, 1, 0]])
returns = torch.randn(4, 3)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    log_probs = torch.log_softmax(policy.rollout(observations, dones), -1)
    chosen = log_probs.gather(-1, actions[..., None]).squeeze(-1)
    loss = -(chosen * returns).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
