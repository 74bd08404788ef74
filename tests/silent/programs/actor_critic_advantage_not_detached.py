"""Advantage actor-critic on a toy bandit, actor and critic in one optimizer: the advantage
`returns - values` is not detached in the policy term, so the critic also learns from
`log_prob * advantage` and drifts away from predicting the return."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
actor, critic = nn.Linear(4, 3), nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=0.1)
for _ in range(4):
    states = torch.randn(16, 4)
    dist = torch.distributions.Categorical(logits=actor(states))
    actions = dist.sample()
    returns = (actions == states[:, :3].argmax(dim=1)).float()
    values = critic(states).squeeze(-1)
    advantage = returns - values
    policy_loss = -(dist.log_prob(actions) * advantage).mean()  # PRIMARY
    loss = policy_loss + 0.5 * F.mse_loss(values, returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*actor.parameters(), *critic.parameters()]]
