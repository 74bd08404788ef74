import torch
from torch import nn
from torch.func import functional_call, grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.block(x)
        return self.head(h)


torch.manual_seed(0)
net = Net()
x = torch.randn(5, 3)
params = {name: p.detach() for name, p in net.named_parameters()}


def loss_of(params):
    return functional_call(net, params, (x,)).pow(2).mean()


grads = grad(loss_of)(params)
