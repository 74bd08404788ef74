import torch

x = torch.tensor([0.5, -1.0, 2.0, 4.0], requires_grad=True)
h = x * 2
a, b = h.chunk(2)
a.mul_(2)  # PRIMARY
(a.sum() + b.sum()).backward()
