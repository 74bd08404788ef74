"""A second branch reads x (conv1_p saves it), then the main branch does `x += ...`.
Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2
(answer: use `x = x + some_layer`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv1 = nn.Conv2d(2, 3, 3, padding=1)
conv1_p = nn.Conv2d(3, 3, 1)
some_layer = nn.Conv2d(2, 3, 1)
inp = torch.randn(2, 2, 4, 4)

x = conv1(inp)  # main branch
x_p = conv1_p(x)  # another branch
x += some_layer(inp)  # PRIMARY
(x.pow(2).sum() + x_p.pow(2).sum()).backward()
grads = [p.grad for m in (conv1, conv1_p, some_layer) for p in m.parameters()]
