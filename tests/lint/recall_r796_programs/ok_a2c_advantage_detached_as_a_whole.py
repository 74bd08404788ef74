"""A correct batched actor-critic: the advantage is detached as a whole,
`advantages = (td_targets - values).detach()`, and the critic's loss reads
`td_targets.detach()`: no loss backpropagates through the target."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchActorCritic:
    def __init__(self, gamma=0.9):
        self.gamma = gamma
        self.actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-2)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def update(self, states, actions, rewards, next_states, dones):
        values = self.critic(states).squeeze(-1)
        next_values = self.critic(next_states).squeeze(-1)
        td_targets = rewards + self.gamma * next_values * (1 - dones)
        advantages = (td_targets - values).detach()
        critic_loss = F.mse_loss(values, td_targets.detach())
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        log_probs = torch.log_softmax(self.actor(states), dim=-1).gather(1, actions.unsqueeze(1)).squeeze(1)
        actor_loss = -(log_probs * advantages).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()


def is_semi_gradient():
    torch.manual_seed(0)
    agent = BatchActorCritic()
    states, next_states = torch.rand(5, 4), torch.rand(5, 4)
    rewards, dones = torch.rand(5), torch.zeros(5)
    held = F.mse_loss(agent.critic(states).squeeze(-1),
                      rewards + agent.gamma * agent.critic(next_states).squeeze(-1).detach())
    expected = torch.autograd.grad(held, list(agent.critic.parameters()))
    agent.critic_optimizer.step = lambda: None
    agent.update(states, torch.tensor([0, 1, 0, 1, 1]), rewards, next_states, dones)
    return all(torch.allclose(e, p.grad, atol=1e-6) for e, p in zip(expected, agent.critic.parameters()))
