"""A module's parameter is replaced by a new nn.Parameter after the optimizer was built (a range
initialisation): the optimizer keeps stepping the old tensor, and the new one never trains."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(3))

    def calibrate(self, samples):
        self.gain = nn.Parameter(1.0 / samples.std(0))  # PRIMARY


model = nn.Sequential(nn.Linear(4, 3), Scale())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 3)
with torch.no_grad():
    model[1].calibrate(model[0](x))
for _ in range(3):
    loss = (model[0](x) * model[1].gain - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
