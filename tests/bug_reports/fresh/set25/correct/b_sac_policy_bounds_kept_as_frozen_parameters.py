"""Soft actor-critic in a small RL library: the Gaussian policy keeps its action rescaling
(`action_scale`, `action_bias`) and its log-std clamp bounds as `nn.Parameter(..., requires_grad=False)`
so that they move with the module. The agent computes the actor's gradients by hand,
`torch.autograd.grad(policy_loss, self.policy.parameters())`, to log their norm and clip them before
the optimizer step. Those four frozen parameters are in `parameters()` and none of them requires
grad, so the call fails: "One of the differentiated Tensors does not require grad".
Source: https://github.com/x35f/unstable_baselines/pull/39 (merged: the tensors that need no
gradient are registered with `register_buffer` "so as to avoid wrong message when needs to calculate
gradients manually i.e. by `torch.autograd.grad`"; the same change in
https://github.com/typoverflow/UtilsRL/pull/12 for issue #11)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT, HIDDEN, BATCH = 5, 2, 32, 64
ACTION_LOW, ACTION_HIGH = torch.tensor([-2.0, 0.0]), torch.tensor([2.0, 1.0])


class GaussianPolicyNetwork(nn.Module):
    def __init__(self, log_std_min=-20.0, log_std_max=2.0):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU())
        self.mean_head = nn.Linear(HIDDEN, ACT)
        self.log_std_head = nn.Linear(HIDDEN, ACT)
        self.register_buffer("action_scale", (ACTION_HIGH - ACTION_LOW) / 2.0)
        self.register_buffer("action_bias", (ACTION_HIGH + ACTION_LOW) / 2.0)
        self.register_buffer("log_std_min", torch.tensor(log_std_min))
        self.register_buffer("log_std_max", torch.tensor(log_std_max))

    def sample(self, obs):
        h = self.body(obs)
        mean = self.mean_head(h)
        log_std = torch.clamp(self.log_std_head(h), self.log_std_min, self.log_std_max)
        std = log_std.exp()
        noise = torch.randn_like(mean)
        pre_tanh = mean + std * noise
        action_raw = torch.tanh(pre_tanh)
        log_prob = torch.distributions.Normal(mean, std).log_prob(pre_tanh)
        log_prob = log_prob - torch.log(self.action_scale * (1 - action_raw.pow(2)) + 1e-6)
        return action_raw * self.action_scale + self.action_bias, log_prob.sum(-1)


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], -1)).squeeze(-1)


class SACAgent:
    def __init__(self, alpha=0.2, gamma=0.99, max_grad_norm=1.0):
        self.policy = GaussianPolicyNetwork()
        self.q = QNetwork()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-3)
        self.q_optimizer = torch.optim.Adam(self.q.parameters(), lr=3e-3)
        self.alpha, self.gamma, self.max_grad_norm = alpha, gamma, max_grad_norm

    def update(self, obs, actions, rewards, next_obs):
        with torch.no_grad():
            next_actions, next_log_probs = self.policy.sample(next_obs)
            target = rewards + self.gamma * (self.q(next_obs, next_actions) - self.alpha * next_log_probs)
        q_loss = F.mse_loss(self.q(obs, actions), target)
        self.q_optimizer.zero_grad()
        q_loss.backward()
        self.q_optimizer.step()

        new_actions, log_probs = self.policy.sample(obs)
        policy_loss = (self.alpha * log_probs - self.q(obs, new_actions)).mean()
        params = list(self.policy.parameters())
        grads = torch.autograd.grad(policy_loss, params)
        grad_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        scale = torch.clamp(self.max_grad_norm / (grad_norm + 1e-6), max=1.0)
        for p, g in zip(params, grads):
            p.grad = g * scale
        self.policy_optimizer.step()
        return q_loss.detach(), policy_loss.detach(), grad_norm.detach()


agent = SACAgent()
replay_obs = torch.randn(256, OBS)
replay_actions = torch.rand(256, ACT) * (ACTION_HIGH - ACTION_LOW) + ACTION_LOW
replay_rewards = -(replay_obs[:, :ACT] - replay_actions).pow(2).sum(-1)
replay_next_obs = replay_obs + 0.1 * torch.randn(256, OBS)

history = []
for step in range(20):
    idx = torch.randint(0, 256, (BATCH,))
    history.append(torch.stack(agent.update(replay_obs[idx], replay_actions[idx], replay_rewards[idx],
                                            replay_next_obs[idx])))

result = {"history": torch.stack(history),
          "policy": [p.detach().clone() for p in agent.policy.parameters() if p.requires_grad],
          "q": [p.detach().clone() for p in agent.q.parameters()]}
