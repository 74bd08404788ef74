import torch

x = torch.randn(4, requires_grad=True)
h = x * 2
with torch.no_grad():  # NO_GRAD
    first = h[:2]  # VIEW
h.mul_(x)  # PRIMARY
loss = first.sum() + h.sum()  # USE
loss.backward()
