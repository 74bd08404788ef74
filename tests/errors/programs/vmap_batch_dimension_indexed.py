import torch
from torch.func import grad, vmap


def predict(w, batch):
    return torch.tanh(batch * w)[:, 0]  # written for a batch of rows


def loss_fn(w, x):
    return predict(w, x).pow(2).sum()  # PRIMARY


torch.manual_seed(0)
w = torch.randn(3)
x = torch.randn(5, 3)
per_sample = vmap(grad(loss_fn), in_dims=(None, 0))(w, x)
