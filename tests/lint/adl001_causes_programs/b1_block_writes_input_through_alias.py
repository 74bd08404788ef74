"""A block whose forward adds its bias into its input through a second name
(`out = inp; out += self.bias`), called on a sigmoid's output, which the
sigmoid keeps for backward: backward() raises."""
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
        gate = torch.sigmoid(self.fc(x))
        return self.block(gate)  # ADL001


def run():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return [p.grad.clone() for p in net.parameters()]
