"""The wrong twin of the advantage shape: the critic's loss is the advantage itself squared,
`advantage.pow(2).mean()`, with the target `reward + gamma * next_value` left in the graph, so the
critic is also pushed through its own bootstrap value (the policy loss reads
`advantage.detach()`, as it should)."""
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
        value = self.critic(states).squeeze(-1)
        next_value = self.critic(next_states).squeeze(-1)
        target = rewards + self.gamma * next_value * (1 - dones)
        advantage = target - value
        critic_loss = advantage.pow(2).mean()
        log_probs = torch.log_softmax(self.actor(states), dim=-1).gather(1, actions.unsqueeze(1)).squeeze(1)
        actor_loss = -(log_probs * advantage.detach()).mean()
        self.optimizer.zero_grad()
        (actor_loss + critic_loss).backward()
        self.optimizer.step()


def bug_shows():
    torch.manual_seed(0)
    agent = ActorCritic()
    states, next_states = torch.rand(5, 4), torch.rand(5, 4)
    rewards, dones = torch.rand(5), torch.zeros(5)
    held = (rewards + agent.gamma * agent.critic(next_states).squeeze(-1).detach()
            - agent.critic(states).squeeze(-1)).pow(2).mean()
    expected = torch.autograd.grad(held, list(agent.critic.parameters()))
    agent.optimizer.step = lambda: None
    agent.update(states, torch.tensor([0, 1, 0, 1, 1]), rewards, next_states, dones)
    return not all(torch.allclose(e, p.grad, atol=1e-6) for e, p in zip(expected, agent.critic.parameters()))
