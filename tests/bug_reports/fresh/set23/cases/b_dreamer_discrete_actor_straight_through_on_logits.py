"""Dreamer with a discrete-action actor trained by backpropagating imagined rewards through the
world model. The actor samples a one-hot action and adds a straight-through term so that the
sample carries a gradient: `action = dist.sample() + logits - logits.detach()`. The forward value
is the one-hot sample, as intended, but the gradient reaches the logits as if the action were the
logits themselves, not the action probabilities (the straight-through estimator for a categorical
passes the gradient through `probs`). Nothing raises; the actor trains on the wrong gradient.
Source: https://github.com/kc-ml2/SimpleDreamer/commit/1800326b8fee2d78a0dffd7bcae27f6221896c2d
("fix straight through gradients in discrete action actor": `dist.sample() + x - x.detach()`
becomes `dist.sample() + dist.probs - dist.probs.detach()`)
expect: silent"""
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
        action = dist.sample() + x - x.detach()
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
