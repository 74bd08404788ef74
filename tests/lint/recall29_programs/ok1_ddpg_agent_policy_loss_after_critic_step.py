"""Correct near twin of b1: the policy loss is built after the critic step."""
import torch
import torch.nn as nn


class DDPGAgent:
    def __init__(self, actor, critic, gamma=0.99):
        self.actor = actor
        self.critic = critic
        self.gamma = gamma
        self.actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)

    def update(self, s, a, r, s2):
        with torch.no_grad():
            y = r + self.gamma * self.critic(torch.cat([s2, self.actor(s2)], 1))
        critic_loss = (self.critic(torch.cat([s, a], 1)) - y).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        policy_loss = -self.critic(torch.cat([s, self.actor(s)], 1)).mean()
        self.actor_opt.zero_grad()
        policy_loss.backward()
        self.actor_opt.step()


def make_agent():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    return DDPGAgent(actor, critic)


def run():
    agent = make_agent()
    s, a, r, s2 = torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 3)
    agent.update(s, a, r, s2)
    return agent
