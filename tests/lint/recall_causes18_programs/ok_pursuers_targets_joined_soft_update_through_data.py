"""Near twin: the target actions are joined before the per-agent loop with their graph (as
r462 does), but the soft update writes the target networks through `.data` (no version
counter is bumped) and each actor is run inside the loop.  Correct: the critic's backward goes
through the target actors' graph without error, and no gradient of a trained network depends on
the target weights' old values."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Pursuer:
    def __init__(self, obs_dims, state_dims, n_agents, n_actions, tau=0.05):
        self.tau = tau
        self.actor = nn.Sequential(nn.Linear(obs_dims, 8), nn.ReLU(), nn.Linear(8, n_actions), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(state_dims + n_agents * n_actions, 8), nn.ReLU(), nn.Linear(8, 1))
        self.target_actor = copy.deepcopy(self.actor)
        self.target_critic = copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-2)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def soft_update(self):
        for target, online in ((self.target_actor, self.actor), (self.target_critic, self.critic)):
            for t, p in zip(target.parameters(), online.parameters()):
                t.data.copy_(self.tau * p.data + (1 - self.tau) * t.data)


class PursuitLearner:
    def __init__(self, n_agents=3, obs_dims=4, n_actions=2):
        self.n_actions = n_actions
        self.pursuers = [Pursuer(obs_dims, n_agents * obs_dims, n_agents, n_actions) for _ in range(n_agents)]

    def update(self, obs, next_obs, actions, rewards):
        state, next_state = torch.cat(obs, dim=1), torch.cat(next_obs, dim=1)
        next_parts = []
        for i, pursuer in enumerate(self.pursuers):
            next_parts.append(pursuer.target_actor(next_obs[i]))
        next_actions = torch.cat(next_parts, dim=1)
        taken = torch.cat(actions, dim=1)
        for i, pursuer in enumerate(self.pursuers):
            target = rewards[:, i:i + 1] + 0.95 * pursuer.target_critic(torch.cat([next_state, next_actions], 1))
            critic_loss = F.mse_loss(pursuer.critic(torch.cat([state, taken], 1)), target)
            pursuer.critic_opt.zero_grad()
            critic_loss.backward(retain_graph=True)
            pursuer.critic_opt.step()
            joint = taken.clone()
            joint[:, i * self.n_actions:(i + 1) * self.n_actions] = pursuer.actor(obs[i])
            actor_loss = -pursuer.critic(torch.cat([state, joint], 1)).mean()
            pursuer.actor_opt.zero_grad()
            actor_loss.backward()
            pursuer.actor_opt.step()
            pursuer.soft_update()
        return [p.actor[0].weight.detach().clone() for p in self.pursuers]


def run():
    torch.manual_seed(0)
    obs = [torch.randn(5, 4) for _ in range(3)]
    next_obs = [torch.randn(5, 4) for _ in range(3)]
    actions = [torch.rand(5, 2) for _ in range(3)]
    return PursuitLearner().update(obs, next_obs, actions, torch.randn(5, 3))
