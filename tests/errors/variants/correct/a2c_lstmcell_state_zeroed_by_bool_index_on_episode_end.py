# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [2, 8]], which is output 0 of IndexPut, is at version 1; expected version 0
#   instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 25
# trigger: an A2C agent with an nn.LSTMCell carries (h, c) over a rollout and resets the state of finished
#   episodes with a loop `for state in (h, c): state[dones[t]] = 0.0` (a boolean index_put_); the
#   actor and critic heads (nn.Linear) saved h as their input, and the next step's cell saved c
# source: none found; the pattern as users write it (recurrent A2C/PPO rollouts that zero the state on episode end)
# results: agent, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class RecurrentActorCritic(nn.Module):
    def __init__(self, obs_size=4, hidden=8, actions=3):
        super().__init__()
        self.cell = nn.LSTMCell(obs_size, hidden)
        self.actor = nn.Linear(hidden, actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs, state):
        h, c = self.cell(obs, state)
        return self.actor(h), self.critic(h).squeeze(-1), (h, c)


torch.manual_seed(0)
agent = RecurrentActorCritic()
optimizer = torch.optim.RMSprop(agent.parameters(), lr=1e-3)
observations = torch.randn(5, 2, 4)
rewards = torch.randn(5, 2)
dones = torch.tensor([[False, False], [True, False], [False, False], [False, True], [False, False]])
losses = []
for update in range(2):
    h = torch.zeros(2, 8)
    c = torch.zeros(2, 8)
    values, log_probs = [], []
    for t in range(5):
        logits, value, (h, c) = agent(observations[t], (h, c))
        log_probs.append(torch.log_softmax(logits, dim=-1)[:, 0])
        values.append(value)
        h, c = (state.masked_fill(dones[t].unsqueeze(1), 0.0) for state in (h, c))
    advantages = rewards - torch.stack(values)
    loss = advantages.pow(2).mean() - (torch.stack(log_probs) * advantages.detach()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
