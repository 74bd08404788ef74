"""Encode-attend-navigate, a REINFORCE agent with a critic baseline for the travelling salesman
problem (astariul/encode-attend-navigate-pytorch's trainer.py): the actor's loss is
`((reward - critique) * log_probs).mean()` with the critic's prediction `critique` not detached, and
it is summed with the critic's MSE loss under one optimizer. The policy-gradient term then also
trains the critic (and the shared encoder through it), pushing the baseline towards whatever makes
`(reward - critique) * log_probs` small instead of towards the expected reward, so the critic's
gradients are wrong and training is unstable (no error, no warning).
Source: https://github.com/astariul/encode-attend-navigate-pytorch/issues/2 ("Critic not detached from
policy loss ... the critic should not receive any backpropagation from the policy loss"; fixed in
PR #3, "by detaching critic value before computing policy loss", which reproduced the official
results).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_CITIES, HIDDEN = 6, 16


def reward_fn(coords, tour):
    """Length of the closed tour (the quantity the agent minimises)."""
    ordered = torch.gather(coords, 1, tour.unsqueeze(-1).expand(-1, -1, coords.size(-1)))
    closed = torch.cat([ordered, ordered[:, :1]], dim=1)
    return (closed[:, 1:] - closed[:, :-1]).norm(dim=-1).sum(-1)


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN))
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.critic = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))

    def forward(self, coords):
        encoded = self.encoder(coords)                       # [batch, cities, hidden]
        critique = self.critic(encoded.mean(1)).squeeze(-1)  # predicted tour length
        batch = coords.size(0)
        visited = torch.zeros(batch, N_CITIES, dtype=torch.bool)
        current = encoded[:, 0]
        visited[:, 0] = True
        tour, log_probs = [torch.zeros(batch, dtype=torch.long)], []
        for step in range(N_CITIES - 1):
            scores = torch.einsum("bh,bch->bc", self.query(current), encoded)
            scores = scores.masked_fill(visited, float("-inf"))
            distribution = torch.distributions.Categorical(logits=scores)
            city = distribution.sample()
            log_probs.append(distribution.log_prob(city))
            tour.append(city)
            visited = visited.clone()
            visited[torch.arange(batch), city] = True
            current = encoded[torch.arange(batch), city]
        return torch.stack(tour, 1), critique, torch.stack(log_probs, 1).sum(1)


agent = Agent()
optim = torch.optim.Adam(agent.parameters(), lr=1e-3)

losses = []
for step in range(5):
    data = torch.rand(8, N_CITIES, 2)
    optim.zero_grad()
    tour, critique, log_probs = agent(data)
    reward = reward_fn(data, tour)
    loss1 = ((reward - critique) * log_probs).mean()
    loss2 = F.mse_loss(reward, critique)
    (loss1 + loss2).backward()
    optim.step()
    losses.append((loss1.detach(), loss2.detach()))

result = {"losses": losses, "params": [p.detach().clone() for p in agent.parameters()]}
