"""An activation that is sqrt(x) for positive inputs and x otherwise, written with `torch.where`:
sqrt's backward gives NaN on the negative inputs, which `where` does not cancel.
Source: https://github.com/pytorch/pytorch/issues/187297 (make the inactive branch's input safe
with a second `where`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def sqrt_activation(x):
    positive = x > 0
    return torch.where(positive, torch.sqrt(torch.where(positive, x, torch.ones_like(x))), x)


layer1, layer2 = nn.Linear(6, 16), nn.Linear(16, 1)
optimizer = torch.optim.SGD(list(layer1.parameters()) + list(layer2.parameters()), lr=0.05)
inputs, target = torch.randn(32, 6), torch.randn(32, 1)
losses = []
for step in range(3):
    out = layer2(sqrt_activation(layer1(inputs)))
    loss = ((out - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in layer1.parameters()]}
