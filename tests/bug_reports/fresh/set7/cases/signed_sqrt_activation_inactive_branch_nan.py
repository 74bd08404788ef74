"""An activation that is sqrt(x) for positive inputs and x otherwise, written as
`torch.where(x > 0, torch.sqrt(x), x)`: sqrt is still evaluated (NaN) on the negative inputs and
its backward gives NaN there, which `where`'s zero gradient does not cancel; the layers before the
activation get NaN gradients and the step makes them NaN (no error).
Source: https://github.com/pytorch/pytorch/issues/187297 ("torch.where backward propagates NaN
gradient from inactive sqrt branch"; expected gradient 1.0, got nan; the usual answer is to make
the inactive branch's input safe with a second `where`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def sqrt_activation(x):
    return torch.where(x > 0, torch.sqrt(x), x)


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
