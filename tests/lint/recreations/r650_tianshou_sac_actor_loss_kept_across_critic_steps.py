"""Tianshou's SACPolicy failed under torch 1.5: `actor_loss.backward()` in
`learn()` raised "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.cuda.FloatTensor [128, 1]],
which is output 0 of TBackward, is at version 2; expected version 1".  The
tensor is the critics' last-layer weight: the actor loss was built through
`critic1(obs, a)` / `critic2(obs, a)` on the actor's fresh action, and the
two critic optimizers stepped (changing those weights in place) before the
actor loss was backpropagated.  Re-created from the traceback as the policy's
`learn()` (actor forward and actor loss first, then both critic updates, then
the actor update) with small actor and critic networks, two batches.
Buggy line: `self.critic1_optim.step()` (and the critic-2 step) between the
actor loss's forward and `actor_loss.backward()`.
Source: https://github.com/thu-ml/tianshou/issues/37"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)

    def forward(self, obs):
        h = self.net(obs)
        return self.mu(h), self.log_std(h).clamp(-20, 2).exp()


class Critic(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=1))


class SACPolicy:
    def __init__(self, actor, critic1, critic2, alpha=0.2, gamma=0.99):
        self.actor, self.critic1, self.critic2 = actor, critic1, critic2
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=3e-4)
        self.critic1_optim = torch.optim.Adam(critic1.parameters(), lr=3e-4)
        self.critic2_optim = torch.optim.Adam(critic2.parameters(), lr=3e-4)
        self._alpha, self._gamma = alpha, gamma

    def __call__(self, obs):
        mu, sigma = self.actor(obs)
        dist = torch.distributions.Normal(mu, sigma)
        x = dist.rsample()
        act = torch.tanh(x)
        log_prob = dist.log_prob(x) - torch.log(1 - act.pow(2) + 1e-6)
        return act, log_prob

    def learn(self, obs, act, rew, obs_next, done):
        a, log_prob = self(obs)
        current_q1a = self.critic1(obs, a)
        current_q2a = self.critic2(obs, a)
        actor_loss = (self._alpha * log_prob - torch.min(current_q1a, current_q2a)).mean()
        with torch.no_grad():
            a_next, log_prob_next = self(obs_next)
            target_q = torch.min(self.critic1(obs_next, a_next), self.critic2(obs_next, a_next))
            target_q = rew + (1 - done) * self._gamma * (target_q - self._alpha * log_prob_next)
        critic1_loss = F.mse_loss(self.critic1(obs, act), target_q)
        self.critic1_optim.zero_grad()
        critic1_loss.backward()
        self.critic1_optim.step()  # expect: ADL003
        critic2_loss = F.mse_loss(self.critic2(obs, act), target_q)
        self.critic2_optim.zero_grad()
        critic2_loss.backward()
        self.critic2_optim.step()  # expect: ADL003
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return {'loss/actor': actor_loss.item(), 'loss/critic1': critic1_loss.item()}


def run():
    torch.manual_seed(0)
    policy = SACPolicy(Actor(), Critic(), Critic())
    for _ in range(2):
        obs, obs_next = torch.randn(16, 3), torch.randn(16, 3)
        act, rew, done = torch.rand(16, 1) * 2 - 1, torch.randn(16, 1), torch.zeros(16, 1)
        policy.learn(obs, act, rew, obs_next, done)
