import torch

x = torch.tensor([0.5, -1.0, 2.0, 4.0], requires_grad=True)
h = x * 2
first, second = h.split(2)
h.mul_(3)  # PRIMARY
loss = (first * second).sum()
loss.backward()
