"""The correct version of func_grad_backward_inside: torch.func.grad differentiates the returned
loss; the function calls no backward()."""
import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 1.0, -0.5], [1.5, 0.0, 1.0]])
y = torch.tensor([1.0, -2.0, 0.5, 3.0])
w = torch.tensor([0.1, -0.3, 0.2])


def loss_fn(w):
    loss = ((x @ w - y) ** 2).mean()
    return loss


gw = grad(loss_fn)(w)
