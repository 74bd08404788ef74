import torch
import torch.nn as nn

torch.manual_seed(0)
conv1 = nn.Conv2d(2, 3, 3, padding=1)
conv1_p = nn.Conv2d(3, 3, 1)
some_layer = nn.Conv2d(2, 3, 1)
inp = torch.randn(2, 2, 4, 4)

x = conv1(inp)
x_p = conv1_p(x)
x = x + some_layer(inp)
(x.pow(2).sum() + x_p.pow(2).sum()).backward()
grads = [p.grad for m in (conv1, conv1_p, some_layer) for p in m.parameters()]
