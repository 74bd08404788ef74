import torch
from torch.func import vmap

x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 3.0, -2.0]], requires_grad=True)


def per_sample_grad(sample):
    loss = (sample ** 3).sum()
    return torch.autograd.grad(loss, sample)[0]  # PRIMARY


grads = vmap(per_sample_grad)(x)
