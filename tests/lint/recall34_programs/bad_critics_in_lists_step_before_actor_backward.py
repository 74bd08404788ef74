"""Fresh shape (recall34, ADL003 through containers): a multi-agent learner keeps one critic
per agent in a list and one optimizer per critic built by a comprehension; in `update` the
agent's critic is stepped before the actor loss, computed from that critic's value, is
backpropagated.  Raises ("modified by an inplace operation")."""
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
            self.critic_optims[k].zero_grad()
            critic_loss.backward(retain_graph=True)
            self.critic_optims[k].step()
            actor_loss = -q.mean()
            self.actor_optim.zero_grad()
            actor_loss.backward()
            self.actor_optim.step()


def run():
    learner = Learner()
    learner.update(torch.randn(4, 3), torch.randn(4, 1))
    return learner
