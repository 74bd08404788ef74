"""Correct near twin (recall 29): an agent whose `__call__` runs only the actor;
a behaviour-cloning loss built from `self(obs)` before the critic's step is
backpropagated after it.  The critic's weights are not in that graph: no
error, silent."""
import torch
import torch.nn as nn


class BCAgent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic
        self.actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)

    def __call__(self, obs):
        return self.actor(obs)

    def update(self, obs, act, ret):
        bc_loss = (self(obs) - act).pow(2).mean()
        value_loss = (self.critic(obs) - ret).pow(2).mean()
        self.critic_opt.zero_grad()
        value_loss.backward()
        self.critic_opt.step()
        self.actor_opt.zero_grad()
        bc_loss.backward()
        self.actor_opt.step()


def run():
    torch.manual_seed(0)
    agent = BCAgent(nn.Linear(3, 1), nn.Linear(3, 1))
    agent.update(torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1))
    return agent
