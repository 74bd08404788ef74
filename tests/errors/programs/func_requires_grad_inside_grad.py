"""A gradient-norm penalty under torch.func.grad: the penalised function turns on requires_grad_()
and calls torch.autograd.grad inside the transform. After the pattern of
https://github.com/pytorch/pytorch/issues/122729 (tape-based autograd inside torch.func)."""
import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
w = torch.tensor([0.5, -1.0, 2.0])


def penalty(w):
    w = w.requires_grad_()  # PRIMARY
    data = ((x @ w) ** 2).sum()
    slope = torch.autograd.grad(data, w, create_graph=True)[0]
    return slope.pow(2).sum()


gw = grad(penalty)(w)
