"""SPiRL's SAC agent computes the policy loss from the critics' Q-values, then
runs `_perform_update` (zero_grad, backward, step) for each critic and only
afterwards for the policy loss, whose graph saved the critics' old weights
("modified by an inplace operation" in `self._perform_update(policy_loss, ...)`).
Source: https://github.com/clvrai/spirl/issues/15"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, in_dim, out_dim, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        return self.net(x)


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mlp = MLP(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mean, log_std = self.mlp(obs).chunk(2, -1)
        dist = torch.distributions.Normal(mean, log_std.clamp(-5, 2).exp())
        action = dist.rsample()
        return action, dist.log_prob(action).sum(-1)


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mlp = MLP(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        return self.mlp(torch.cat([obs, act], -1)).squeeze(-1)


class SACAgent:
    def __init__(self, obs_dim=4, act_dim=2, discount=0.99, alpha=0.1):
        self.policy = Policy(obs_dim, act_dim)
        self.critics = [Critic(obs_dim, act_dim) for _ in range(2)]
        self.critic_targets = [Critic(obs_dim, act_dim) for _ in range(2)]
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=3e-4) for c in self.critics]
        self.discount = discount
        self.alpha = alpha

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        opt.step()

    def _compute_policy_loss(self, obs, action, log_prob):
        q_est = torch.min(*[critic(obs, action) for critic in self.critics])
        return (self.alpha * log_prob - q_est).mean()

    def _compute_q_target(self, next_obs, reward, done):
        with torch.no_grad():
            next_action, next_log_prob = self.policy(next_obs)
            value_next = torch.min(*[ct(next_obs, next_action) for ct in self.critic_targets])
            value_next = value_next - self.alpha * next_log_prob
            return reward + (1 - done) * self.discount * value_next

    def update(self, obs, act, reward, next_obs, done):
        action, log_prob = self.policy(obs)
        policy_loss = self._compute_policy_loss(obs, action, log_prob)
        q_target = self._compute_q_target(next_obs, reward, done)
        qs = [critic(obs, act) for critic in self.critics]
        critic_losses = [0.5 * (q - q_target).pow(2).mean() for q in qs]

        [self._perform_update(critic_loss, critic_opt, critic)  # missed: ADL003
         for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]
        self._perform_update(policy_loss, self.policy_opt, self.policy)


def run():
    torch.manual_seed(0)
    agent = SACAgent()
    agent.update(torch.randn(8, 4), torch.randn(8, 2), torch.randn(8), torch.randn(8, 4), torch.zeros(8))
