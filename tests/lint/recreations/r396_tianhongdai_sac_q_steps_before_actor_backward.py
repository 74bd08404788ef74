"""TianhongDai's reinforcement-learning-algorithms SAC computes the actor
loss from `torch.min(self.qf1(obses, actions_), self.qf2(obses, actions_))`,
then updates qf1 and qf2 (backward and step each) and only then runs
`actor_loss.backward()`, whose graph holds the Q networks' weights just
stepped in place: "modified by an inplace operation" on PyTorch >= 1.5.  The
reported fix detaches the Q values in the actor loss; computing the actor
loss after the Q steps also works.
Buggy line: `self.qf1_optim.step()` in `sac_agent._update_newtork`.
Source: https://github.com/TianhongDai/reinforcement-learning-algorithms/issues/8"""
import torch
import torch.nn as nn
from torch.distributions import Normal


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, hidden)
        self.q = nn.Linear(hidden, 1)

    def forward(self, obs, action):
        return self.q(torch.relu(self.fc1(torch.cat([obs, action], dim=1))))


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden)
        self.mean = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)

    def forward(self, obs):
        h = torch.relu(self.fc1(obs))
        return self.mean(h), self.log_std(h).clamp(-5, 2)


def select_actions(pis):
    mean, log_std = pis
    normal = Normal(mean, log_std.exp())
    pre_tanh = normal.rsample()
    actions = torch.tanh(pre_tanh)
    log_prob = (normal.log_prob(pre_tanh) - torch.log(1 - actions.pow(2) + 1e-6)).sum(dim=1, keepdim=True)
    return actions, log_prob


class SacAgent:
    def __init__(self, obs_dim=3, act_dim=2, lr=3e-4, gamma=0.99):
        self.actor_net = Actor(obs_dim, act_dim)
        self.qf1, self.qf2 = QNetwork(obs_dim, act_dim), QNetwork(obs_dim, act_dim)
        self.target_qf1, self.target_qf2 = QNetwork(obs_dim, act_dim), QNetwork(obs_dim, act_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -act_dim
        self.actor_optim = torch.optim.Adam(self.actor_net.parameters(), lr=lr)
        self.qf1_optim = torch.optim.Adam(self.qf1.parameters(), lr=lr)
        self.qf2_optim = torch.optim.Adam(self.qf2.parameters(), lr=lr)
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=lr)
        self.gamma = gamma

    def _update_newtork(self, obses, actions, rewards, obses_, inverse_dones):
        actions_, log_prob = select_actions(self.actor_net(obses))
        alpha_loss = -(self.log_alpha * (log_prob + self.target_entropy).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()
        alpha = self.log_alpha.exp()
        q_actions_ = torch.min(self.qf1(obses, actions_), self.qf2(obses, actions_))
        actor_loss = (alpha * log_prob - q_actions_).mean()
        q1_value = self.qf1(obses, actions)
        q2_value = self.qf2(obses, actions)
        with torch.no_grad():
            actions_next_, log_prob_next = select_actions(self.actor_net(obses_))
            target_next = torch.min(self.target_qf1(obses_, actions_next_), self.target_qf2(obses_, actions_next_)) - alpha * log_prob_next
            target_q_value = rewards + inverse_dones * self.gamma * target_next
        qf1_loss = (q1_value - target_q_value).pow(2).mean()
        qf2_loss = (q2_value - target_q_value).pow(2).mean()
        self.qf1_optim.zero_grad()
        qf1_loss.backward()
        self.qf1_optim.step()  # expect: ADL003
        self.qf2_optim.zero_grad()
        qf2_loss.backward()
        self.qf2_optim.step()  # expect: ADL003
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return qf1_loss.item(), qf2_loss.item(), actor_loss.item()


def run():
    torch.manual_seed(0)
    SacAgent()._update_newtork(torch.randn(4, 3), torch.rand(4, 2) * 2 - 1, torch.randn(4, 1), torch.randn(4, 3), torch.ones(4, 1))
