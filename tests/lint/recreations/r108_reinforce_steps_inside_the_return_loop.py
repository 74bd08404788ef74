"""minimalRL REINFORCE: `train_net()` walks the episode's stored
`(reward, prob)` pairs backwards and, for each step, computes
`-log(prob) * R`, calls `backward()` and `optimizer.step()`.  Every stored
probability was computed during the rollout with the weights as they were
then; after the first step the next backward goes through layers whose
weights the optimizer has changed ("modified by an inplace operation" on
current PyTorch).  The maintainers moved the step after the loop.
Source: https://github.com/seungeunrho/minimalRL/issues/26"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

learning_rate = 0.0002
gamma = 0.98


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=learning_rate)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.softmax(self.fc2(x), dim=0)
        return x

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        for r, prob in self.data[::-1]:
            R = r + gamma * R
            loss = -torch.log(prob) * R
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()  # missed: ADL003
        self.data = []


def run(steps=3):
    torch.manual_seed(0)
    pi = Policy()
    s = torch.randn(4)
    for _ in range(steps):
        prob = pi(s)
        m = Categorical(prob)
        a = m.sample()
        s, r = torch.randn(4), 1.0
        pi.put_data((r, prob[a]))
    pi.train_net()
