"""Lane detection FPN neck: a positional embedding is added in place, `x += pos`, to a ReLU's
output that ReLU saved.
Source: https://github.com/Wolfwjs/GANet/issues/20 (fix: `x = x + pos`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
lateral = nn.Sequential(nn.Conv2d(3, 4, 1), nn.ReLU())
pos = nn.Parameter(torch.randn(1, 4, 4, 4))
image = torch.randn(2, 3, 4, 4)

x = lateral(image)
x += pos
loss = x.pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in lateral.parameters()], "pos": pos.grad}
