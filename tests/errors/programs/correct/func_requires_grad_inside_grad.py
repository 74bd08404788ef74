import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
w = torch.tensor([0.5, -1.0, 2.0])


def data_term(w):
    return ((x @ w) ** 2).sum()


def penalty(w):
    slope = grad(data_term)(w)
    return slope.pow(2).sum()


gw = grad(penalty)(w)
