"""toshikwa's soft-actor-critic.pytorch computes the critic losses and the
policy loss first, then hands each to a helper, `update_params(optim,
network, loss)`, that clears, backpropagates and steps.  The policy loss goes
through both critics (`q1, q2 = self.critic(states, sampled_action)`), and
the helper has already stepped Q1 and Q2 in place when it backpropagates the
policy loss: "modified by an inplace operation" since PyTorch 1.5.  The fix
computes the policy loss after the critics' updates.
Buggy line: the first `update_params(self.q1_optim, ...)` in `SacAgent.learn`.
Source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def update_params(optim, network, loss, grad_clip=None):
    optim.zero_grad()
    loss.backward()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(network.parameters(), grad_clip)
    optim.step()


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, states, actions):
        return self.net(torch.cat([states, actions], dim=1))


class TwinnedQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.Q1 = QNetwork(obs_dim, act_dim)
        self.Q2 = QNetwork(obs_dim, act_dim)

    def forward(self, states, actions):
        return self.Q1(states, actions), self.Q2(states, actions)


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)

    def sample(self, states):
        h = self.body(states)
        normal = torch.distributions.Normal(self.mean(h), self.log_std(h).clamp(-5, 2).exp())
        x = normal.rsample()
        action = torch.tanh(x)
        log_prob = (normal.log_prob(x) - torch.log(1 - action.pow(2) + 1e-6)).sum(1, keepdim=True)
        return action, -log_prob


class SacAgent:
    def __init__(self, obs_dim=3, act_dim=2, lr=3e-4, gamma=0.99, alpha=0.2):
        self.policy = GaussianPolicy(obs_dim, act_dim)
        self.critic = TwinnedQNetwork(obs_dim, act_dim)
        self.critic_target = TwinnedQNetwork(obs_dim, act_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.q1_optim = torch.optim.Adam(self.critic.Q1.parameters(), lr=lr)
        self.q2_optim = torch.optim.Adam(self.critic.Q2.parameters(), lr=lr)
        self.gamma = gamma
        self.alpha = alpha

    def calc_critic_loss(self, batch):
        states, actions, rewards, next_states, dones = batch
        curr_q1, curr_q2 = self.critic(states, actions)
        with torch.no_grad():
            next_actions, next_entropies = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
            target_q = rewards + (1.0 - dones) * self.gamma * next_q
        return F.mse_loss(curr_q1, target_q), F.mse_loss(curr_q2, target_q)

    def calc_policy_loss(self, batch):
        states = batch[0]
        sampled_action, entropy = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)
        return torch.mean(-torch.min(q1, q2) - self.alpha * entropy)

    def learn(self, batch):
        q1_loss, q2_loss = self.calc_critic_loss(batch)
        policy_loss = self.calc_policy_loss(batch)
        update_params(self.q1_optim, self.critic.Q1, q1_loss)  # expect: ADL003
        update_params(self.q2_optim, self.critic.Q2, q2_loss)  # expect: ADL003
        update_params(self.policy_optim, self.policy, policy_loss)


def run():
    torch.manual_seed(0)
    batch = (torch.randn(4, 3), torch.rand(4, 2) * 2 - 1, torch.randn(4, 1), torch.randn(4, 3), torch.zeros(4, 1))
    SacAgent().learn(batch)
