"""A correct advantage actor-critic (the near twin of r805's false finding): the target
`rewards + gamma * next_values` keeps the critic's graph and `advantages = targets - values` is
formed from it, but the value loss reads `targets.detach()` and the policy loss
`advantages.detach()`: no loss backpropagates through the target."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic:
    def __init__(self, gamma=0.9):
        self.gamma = gamma
        self.actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=1e-2)

    def update(self, states, actions, rewards, next_states, dones):
        values = self.critic(states).squeeze(-1)
        next_values = self.critic(next_states).squeeze(-1)
        targets = rewards + self.gamma * next_values * (1 - dones)
        advantages = targets - values
        value_loss = F.mse_loss(values, targets.detach())
        log_probs = torch.log_softmax(self.actor(states), dim=-1).gather(1, actions.unsqueeze(1)).squeeze(1)
        policy_loss = -(log_probs * advantages.detach()).mean()
        self.optimizer.zero_grad()
        (policy_loss + 0.5 * value_loss).backward()
        self.optimizer.step()


def is_semi_gradient():
    torch.manual_seed(0)
    agent = ActorCritic()
    states, next_states = torch.rand(5, 4), torch.rand(5, 4)
    rewards, dones = torch.rand(5), torch.zeros(5)
    held = F.mse_loss(agent.critic(states).squeeze(-1),
                      rewards + agent.gamma * agent.critic(next_states).squeeze(-1).detach())
    expected = torch.autograd.grad(0.5 * held, list(agent.critic.parameters()))
    agent.optimizer.step = lambda: None
    agent.update(states, torch.tensor([0, 1, 0, 1, 1]), rewards, next_states, dones)
    return all(torch.allclose(e, p.grad, atol=1e-6) for e, p in zip(expected, agent.critic.parameters()))
