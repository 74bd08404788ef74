import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
y = torch.tensor([1.0, 0.0, 2.0])
w = torch.tensor([0.2, -0.4])


def squared_errors(w):
    return ((x @ w - y) ** 2).mean()


gw = grad(squared_errors)(w)
