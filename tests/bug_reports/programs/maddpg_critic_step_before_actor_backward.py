"""MADDPG: the critic is updated (critic_optim.step()) before actor_loss.backward(), and the
actor's loss was computed through the critic before that step.
Source: https://github.com/starry-sky6688/MADDPG/issues/27 (maintainer: move the critic update;
the actor's loss used the critic's old weights)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)
o, u, r = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1)

q_value = critic(torch.cat([o, u], dim=1))
critic_loss = (r - q_value).pow(2).mean()
u_new = actor(o)
actor_loss = -critic(torch.cat([o, u_new], dim=1)).mean()

critic_optim.zero_grad()
critic_loss.backward()
critic_optim.step()
actor_optim.zero_grad()
actor_loss.backward()  # PRIMARY
actor_optim.step()
