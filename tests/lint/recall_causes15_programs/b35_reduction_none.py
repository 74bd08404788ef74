import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent:
    def __init__(self):
        self.q = nn.Linear(4, 3)
        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)

    def learn(self, s, a, target):
        q = self.q(s).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, target, reduction="none")  # BUG35
        weighted = 0.5 * loss
        self.opt.zero_grad()
        weighted.backward()
        self.opt.step()


def run():
    Agent().learn(torch.randn(6, 4), torch.randint(0, 3, (6,)), torch.randn(6))
