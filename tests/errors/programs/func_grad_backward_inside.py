"""A least-squares loss that still calls loss.backward(), given to torch.func.grad: backward() is
the tape API and cannot run inside a torch.func transform. The pattern as users write it (a
training loss moved to torch.func with its backward() left in)."""
import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 1.0, -0.5], [1.5, 0.0, 1.0]])
y = torch.tensor([1.0, -2.0, 0.5, 3.0])
w = torch.tensor([0.1, -0.3, 0.2])


def loss_fn(w):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()  # PRIMARY
    return loss


gw = grad(loss_fn)(w)
