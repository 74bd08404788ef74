import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
keep = torch.ones(3)
keep[1] = 0
b = b * keep + 2 * (1 - keep)
b.sum().backward()
grads = [a.grad]
values = [b]
