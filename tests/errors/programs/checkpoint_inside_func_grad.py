"""Activation checkpointing inside a model whose gradients torch.func.grad computes (through
functional_call): checkpoint's saved-tensor hooks are not supported under torch.func.grad. After
https://github.com/pytorch/pytorch/issues/122729 and https://github.com/pytorch/pytorch/issues/141845."""
import torch
from torch import nn
from torch.func import functional_call, grad
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = checkpoint(self.block, x, use_reentrant=False)  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
net = Net()
x = torch.randn(5, 3)
params = {name: p.detach() for name, p in net.named_parameters()}


def loss_of(params):
    return functional_call(net, params, (x,)).pow(2).mean()


grads = grad(loss_of)(params)
