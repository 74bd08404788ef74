# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in computation tracked by autograd.
# code: AD109 (catalogue: inference_saved)
# set: 4
# trigger: a DQN agent computes its bootstrapped targets with the target network inside
#   torch.inference_mode(); the Huber loss saves them for backward
# source: none found; the pattern as users write it
# results: losses, agent.online
import copy

import torch
from torch import nn
import torch.nn.functional as F


class Agent:
    def __init__(self):
        self.online = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        self.target = copy.deepcopy(self.online)
        self.optimizer = torch.optim.SGD(self.online.parameters(), lr=0.1)

    def update(self, states, actions, rewards, next_states, gamma=0.9):
        with torch.inference_mode():  # PRIMARY
            targets = rewards + gamma * self.target(next_states).max(dim=1).values
        q = self.online(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
agent = Agent()
states, next_states = torch.randn(6, 4), torch.randn(6, 4)
actions, rewards = torch.tensor([0, 1, 1, 0, 1, 0]), torch.randn(6)
losses = [agent.update(states, actions, rewards, next_states) for _ in range(2)]
