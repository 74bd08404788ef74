"""Correct near twin: the same learner backpropagates the actor loss before the critic's step
(the gradients of both losses are taken from the same graph first).  Runs."""
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, s=3, a=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(s + a, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, s, a):
        return self.body(torch.cat([s, a], -1))


class Learner:
    def __init__(self, n_agents=3):
        torch.manual_seed(0)
        self.n_agents = n_agents
        self.actors = nn.ModuleList([nn.Linear(3, 2) for _ in range(n_agents)])
        self.critics = [Critic() for _ in range(n_agents)]
        self.critic_optims = [torch.optim.SGD(c.parameters(), lr=0.1) for c in self.critics]
        self.actor_optim = torch.optim.SGD(self.actors.parameters(), lr=0.1)

    def update(self, states, targets):
        for k in range(self.n_agents):
            action = torch.tanh(self.actors[k](states))
            q = self.critics[k](states, action)
            critic_loss = ((q - targets) ** 2).mean()
            actor_loss = -q.mean()
            self.critic_optims[k].zero_grad()
            critic_loss.backward(retain_graph=True)
            self.actor_optim.zero_grad()
            actor_loss.backward()
            self.critic_optims[k].step()
            self.actor_optim.step()


def run():
    learner = Learner()
    learner.update(torch.randn(4, 3), torch.randn(4, 1))
    return learner
