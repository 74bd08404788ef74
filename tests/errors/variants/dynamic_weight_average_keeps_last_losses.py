# message: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).
# code: AD302 (catalogue: backward_twice)
# set: 8
# trigger: a dynamic weight average of two task losses keeps the last iteration's stacked losses on
#   self (with their graph) to weight the next iteration's losses by the ratio; the next backward()
#   goes through the freed graph of the previous iteration
# source: none found; the pattern as users write it (dynamic weight averaging, Liu et al. 2019)
# results: totals, model
import torch
from torch import nn
import torch.nn.functional as F


class DynamicWeightAverage:
    def __init__(self, temperature=2.0):
        self.previous = None
        self.temperature = temperature

    def combine(self, losses):
        stacked = torch.stack(losses)
        if self.previous is None:
            weights = torch.ones_like(stacked)
        else:
            weights = len(losses) * torch.softmax(stacked / self.previous / self.temperature, 0)
        self.previous = stacked  # PRIMARY
        return (weights * stacked).sum()


class TwoTasks(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.a = nn.Linear(4, 1)
        self.b = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.a(h), self.b(h)


torch.manual_seed(0)
model = TwoTasks()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
weighting = DynamicWeightAverage()
totals = []
for _ in range(3):
    x, ya, yb = torch.randn(4, 3), torch.randn(4, 1), torch.randn(4, 1)
    optimizer.zero_grad()
    out_a, out_b = model(x)
    total = weighting.combine([F.mse_loss(out_a, ya), F.mse_loss(out_b, yb)])
    total.backward()
    optimizer.step()
    totals.append(total.item())
