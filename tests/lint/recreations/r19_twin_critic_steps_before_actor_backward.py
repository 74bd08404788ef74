"""SAC with twin critics: the policy loss takes `torch.min` of both critics'
values for the new actions, and is computed before the critics' optimizers
step; its `backward()` then needs the critics' old weights ("modified by an
inplace operation" since PyTorch 1.5).  Moving the policy loss after the critic
steps fixes it.
Source: https://github.com/microsoft/oac-explore/issues/27"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return self.body(torch.cat([obs, action], -1))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)

    def forward(self, obs):
        mean, log_std = self.body(obs).chunk(2, -1)
        action = torch.tanh(mean + log_std.exp() * torch.randn_like(mean))
        return action, -log_std.sum(-1, keepdim=True)


class Trainer:
    def __init__(self):
        self.policy, self.qf1, self.qf2 = Policy(), QNetwork(), QNetwork()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters())
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters())
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters())

    def train_step(self, obs, actions, targets, alpha=0.2):
        new_actions, log_pi = self.policy(obs)
        q_new_actions = torch.min(self.qf1(obs, new_actions), self.qf2(obs, new_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()
        qf1_loss = F.mse_loss(self.qf1(obs, actions), targets)
        qf2_loss = F.mse_loss(self.qf2(obs, actions), targets)

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()  # expect: ADL003
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward(retain_graph=True)
        self.qf2_optimizer.step()  # expect: ADL003
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()


def run():
    torch.manual_seed(0)
    Trainer().train_step(torch.randn(8, 3), torch.randn(8, 2), torch.randn(8, 1))
