"""Two ReLU(inplace=True) modules in a row: the second overwrites the output the first saved.
Source: https://github.com/pytorch/pytorch/issues/34429 (answer: the second in-place ReLU
changes the first one's saved output; use inplace=False)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv1 = nn.Conv2d(3, 8, kernel_size=1, bias=False)
bn = nn.BatchNorm2d(8)
relu1 = nn.ReLU(inplace=True)
relu2 = nn.ReLU(inplace=True)  # PRIMARY

x = conv1(torch.randn(4, 3, 5, 5))
x = bn(x)
x = relu1(x)
x = relu2(x)
x.sum().backward()
grads = [conv1.weight.grad, bn.weight.grad]
