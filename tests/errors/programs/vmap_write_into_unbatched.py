import torch
from torch.func import vmap


def features(x):
    out = torch.zeros(2, 3)  # PRIMARY
    out[0] = x * 2
    out[1] = x.sin()
    return out


torch.manual_seed(0)
x = torch.randn(4, 3)
batched = vmap(features)(x)
