"""An actor-critic trained with generalized advantage estimation, with the critic's value
estimates kept as tensors (`values.append(value)`, `torch.stack(values)`) so that the value loss
trains the critic head.
Source: https://github.com/jsboige/CoursIA/pull/15256 (the fix keeps the value tensors)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACTIONS, STEPS, GAMMA, LAMBDA = 4, 3, 16, 0.95, 0.9


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh())
        self.policy_head = nn.Linear(32, ACTIONS)
        self.value_head = nn.Linear(32, 1)

    def forward(self, obs):
        hidden = self.body(obs)
        return self.policy_head(hidden), self.value_head(hidden).squeeze(-1)


def toy_env_step(obs, action):
    reward = float(obs[action]) - 0.1 * action
    next_obs = torch.roll(obs, 1) * 0.8 + 0.2 * torch.tanh(obs * (action + 1))
    return next_obs, reward


def rollout(model, obs):
    log_probs, values, rewards = [], [], []
    for _ in range(STEPS):
        logits, value = model(obs)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        values.append(value)
        obs, reward = toy_env_step(obs, int(action))
        rewards.append(reward)
    return torch.stack(log_probs), torch.stack(values), torch.tensor(rewards)


def gae(rewards, values):
    advantages = torch.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(len(rewards))):
        next_value = values[t + 1] if t + 1 < len(rewards) else 0.0
        delta = rewards[t] + GAMMA * next_value - values[t]
        running = delta + GAMMA * LAMBDA * running
        advantages[t] = running
    return advantages


model = ActorCritic()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
start_obs = torch.tensor([0.5, -0.2, 0.1, 0.3])
losses = []
for epoch in range(5):
    log_probs, values_t, rewards = rollout(model, start_obs)
    advantages = gae(rewards, values_t.detach())
    returns = advantages + values_t.detach()
    pg_loss = -(log_probs * advantages).mean()
    v_loss = F.mse_loss(values_t, returns)
    loss = pg_loss + 0.5 * v_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
