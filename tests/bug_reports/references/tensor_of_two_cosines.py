import torch

a = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(1.5, requires_grad=True)
cos_a = torch.cos(a)
cos_b = torch.cos(b)
y2 = torch.stack([cos_a, cos_b])
y2.sum().backward()
grads = [a.grad, b.grad]
