"""The same Dreamer actor with the commit's fix: the straight-through term passes the gradient
through the action probabilities, `dist.sample() + dist.probs - dist.probs.detach()`.
Source: https://github.com/kc-ml2/SimpleDreamer/commit/1800326b8fee2d78a0dffd7bcae27f6221896c2d"""
import torch
import torch.nn as nn

torch.manual_seed(0)

STATE, ACTIONS, HIDDEN, HORIZON, BATCH = 4, 3, 16, 5, 8


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(STATE, HIDDEN), nn.ELU(), nn.Linear(HIDDEN, ACTIONS))

    def forward(self, state):
        x = self.network(state)
        dist = torch.distributions.OneHotCategorical(logits=x)
        action = dist.sample() + dist.probs - dist.probs.detach()
        return action


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.transition = nn.Linear(STATE + ACTIONS, STATE)
        self.reward = nn.Linear(STATE, 1)

    def forward(self, state, action):
        next_state = torch.tanh(self.transition(torch.cat([state, action], dim=-1)))
        return next_state, self.reward(next_state).squeeze(-1)


world_model = WorldModel()
world_model.requires_grad_(False)
actor = Actor()
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
start_states = torch.randn(20, BATCH, STATE)

losses = []
for start in start_states:
    state = start
    imagined_rewards = []
    for _ in range(HORIZON):
        action = actor(state)
        state, reward = world_model(state, action)
        imagined_rewards.append(reward)
    actor_loss = -torch.stack(imagined_rewards).sum(dim=0).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    losses.append(actor_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in actor.parameters()]}
