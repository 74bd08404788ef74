"""Near twin of b1: the block writes its input through a second name, but the
input is a linear layer's output, which nothing keeps.  Silent; runs."""
import torch
import torch.nn as nn


class BiasBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, inp):
        out = inp
        out += self.bias
        return out


class Net(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.block = BiasBlock(dim)

    def forward(self, x):
        pre = self.fc(x)
        return torch.sigmoid(self.block(pre))


def run():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return [p.grad.clone() for p in net.parameters()]
