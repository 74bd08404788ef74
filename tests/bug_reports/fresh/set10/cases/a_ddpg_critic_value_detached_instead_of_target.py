"""DDPG for connected automated vehicles (Graph_CAVs' GRL_Library/agent/Continuous/DDPG_agent.py,
`learn_onestep`): the critic's loss detaches the wrong side. `critic_value = self.critic_model(state,
action).detach()` cuts the critic's own prediction out of the graph, while the TD target built from
the target networks is left attached. `critic_loss.backward()` then sends gradients only into the
target actor and target critic (which no optimizer steps: they follow by soft updates), the critic's
optimizer finds no gradient and never moves it, and the actor keeps climbing a critic frozen at its
initial weights (no error: the loss still requires grad through the target networks).
Source: https://github.com/Jacklinkk/Graph_CAVs/issues/9 ("the critic value is being detached.
Typically, the DDPG algorithm uses detach() on the critic_target value, so this might be a typo").
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, state_dim=4, action_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 16), nn.ReLU(), nn.Linear(16, action_dim), nn.Tanh())

    def forward(self, state):
        return self.net(state)


class Critic(nn.Module):
    def __init__(self, state_dim=4, action_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, state, action):
        return self.net(torch.cat([state, action], dim=-1))


actor, critic = Actor(), Critic()
actor_target, critic_target_net = copy.deepcopy(actor), copy.deepcopy(critic)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
gamma, tau = 0.9, 0.05

# A fixed replay batch of (state, action, reward, next_state, done) transitions.
states, actions = torch.randn(8, 4), torch.rand(8, 2) * 2 - 1
rewards, next_states, dones = torch.randn(8, 1), torch.randn(8, 4), torch.zeros(8, 1)

losses = []
for step in range(5):
    action_target = actor_target(next_states)
    critic_value_next = critic_target_net(next_states, action_target)
    critic_value = critic(states, actions)
    critic_value = critic_value.detach()
    critic_target = rewards + gamma * critic_value_next * (1 - dones)
    critic_loss = F.smooth_l1_loss(critic_value, critic_target)
    critic_optimizer.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_optimizer.step()

    actor_loss = -critic(states, actor(states)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward(retain_graph=True)
    actor_optimizer.step()

    with torch.no_grad():
        for target, source in ((actor_target, actor), (critic_target_net, critic)):
            for target_param, source_param in zip(target.parameters(), source.parameters()):
                target_param.copy_((1 - tau) * target_param + tau * source_param)
    losses.append((critic_loss.detach(), actor_loss.detach()))

result = {"losses": losses, "critic": [p.detach().clone() for p in critic.parameters()],
          "actor": [p.detach().clone() for p in actor.parameters()]}
