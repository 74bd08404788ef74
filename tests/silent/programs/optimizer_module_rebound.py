"""The network is built again under the same name (a wider one) after the optimizer was built
for the first: the optimizer keeps the first network's parameters, the second never trains."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(10, 4), torch.randn(10, 1)
for _ in range(2):
    loss = (net(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))  # PRIMARY
for _ in range(3):
    loss = (net(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in net.parameters()]
