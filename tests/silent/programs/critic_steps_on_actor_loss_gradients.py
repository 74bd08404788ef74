"""DDPG-style update, actor first: the actor's loss is computed through the critic, so its
backward() also fills the critic's gradients. The critic's optimizer clears only after its own
step, so the critic's backward() adds to what the actor's loss left, and the critic's step also
follows the actor's objective (raise Q of the actor's actions) instead of regressing the return."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1), nn.Tanh())
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
for _ in range(4):
    states, actions, returns = torch.randn(32, 3), torch.rand(32, 1) * 2 - 1, torch.randn(32, 1)
    actor_loss = -critic(torch.cat([states, actor(states)], dim=1)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    critic_loss = F.mse_loss(critic(torch.cat([states, actions], dim=1)), returns)
    critic_loss.backward()  # PRIMARY
    critic_optimizer.step()
    critic_optimizer.zero_grad()
result = [p.detach().clone() for p in [*actor.parameters(), *critic.parameters()]]
