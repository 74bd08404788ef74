"""`b[i] = b[i] + 1` in a loop, where `torch.mm(self.param, b)` saved b for its backward.
Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html (the fix there:
build a one-hot `bione` and write `b = b + bione`)."""
import torch

torch.manual_seed(0)
param = torch.randn(4, 4, requires_grad=True)
a = torch.randn(4, 1)
y = 0
b = torch.mm(param, a)
for i in range(4):
    b[i] = b[i] + 1  # PRIMARY
    y = y + torch.mm(param, b)
y.sum().backward()
grads = [param.grad]
