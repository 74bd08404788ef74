# message: A view was created in no_grad mode and its base or another view of its base has been
#   modified inplace with grad mode enabled.
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 3
# trigger: an actor-critic forward keeps a constant baseline as a row of the value head's output
#   taken under torch.no_grad(), then masks the outputs in place; the loss reads the baseline
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
        self.heads = nn.Linear(8, 2)

    def forward(self, obs, alive):
        values = self.heads(self.body(obs))
        with torch.no_grad():
            baseline = values[:, 0]
        values.mul_(alive)  # PRIMARY
        return values, baseline


torch.manual_seed(0)
model = ActorCritic()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
obs, returns = torch.randn(5, 3), torch.randn(5)
alive = torch.tensor([[1.0], [1.0], [0.0], [1.0], [0.0]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    values, baseline = model(obs, alive)
    advantage = returns - baseline
    loss = -(advantage * values[:, 1]).mean() + values[:, 0].sub(returns).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
