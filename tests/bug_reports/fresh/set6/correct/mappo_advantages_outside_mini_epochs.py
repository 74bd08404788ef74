"""Multi-agent PPO (MAPPO): the advantages are computed from the critic once, before the loop over
mini-epochs, and reused in the actor loss of every mini-epoch; the first mini-epoch's `backward()`
frees the critic's part of that graph, so a second mini-epoch fails.
Source: https://github.com/hijkzzz/pymarl2/issues/46 ("The PPO/MAPPO code will crash if mini_epochs
> 1 ... trying to backward through the graph a second time"; the reporter's fix: detach the
advantages used inside the loop, so that the critic still learns from its own loss).
expect: raises"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
N_AGENTS, OBS, ACTIONS = 3, 6, 4
actor = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Linear(32, ACTIONS))
critic = nn.Sequential(nn.Linear(OBS * N_AGENTS, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=3e-4)

obs = torch.randn(10, N_AGENTS, OBS)
state = obs.reshape(10, -1)
with torch.no_grad():
    dist = Categorical(logits=actor(obs))
    actions = dist.sample()
    old_log_probs = dist.log_prob(actions)
returns = torch.randn(10, 1)


def train(mini_epochs=3, clip=0.2):
    losses = []
    advantages = (returns - critic(state)).detach()
    for _ in range(mini_epochs):
        log_probs = Categorical(logits=actor(obs)).log_prob(actions)
        ratio = (log_probs - old_log_probs).exp()
        surrogate = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
        critic_loss = ((returns - critic(state)) ** 2).mean()
        loss = -surrogate.mean() + 0.5 * critic_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


losses = train()
result = {"losses": losses, "actor": [p.detach().clone() for p in actor.parameters()],
          "critic": [p.detach().clone() for p in critic.parameters()]}
