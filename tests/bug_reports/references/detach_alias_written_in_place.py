import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.exp()
c = b.detach().clone()
c[0] = 0.0
b.sum().backward()
grads = [a.grad]
values = [c]
