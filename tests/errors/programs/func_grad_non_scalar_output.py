"""torch.func.grad of a function that returns one squared error per example instead of the loss;
the pattern as users write it (torch.func's message suggests vjp or jacrev instead)."""
import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
y = torch.tensor([1.0, 0.0, 2.0])
w = torch.tensor([0.2, -0.4])


def squared_errors(w):
    return (x @ w - y) ** 2  # PRIMARY


gw = grad(squared_errors)(w)
