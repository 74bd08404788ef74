"""A block whose forward loops over its `ModuleList` of `Sequential(Linear, ReLU)` layers
(appended in a loop) and returns `(skip, h)`; item [1] of each block's result is scaled
in place: the last ReLU kept that output."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(len(widths) - 1):
            self.layers.append(nn.Sequential(nn.Linear(widths[i], widths[i + 1]), nn.ReLU()))

    def forward(self, h):
        skip = h * 0.5
        for layer in self.layers:
            h = layer(h)
        return skip, h


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block((4, 8, 4)) for _ in range(2)])
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        total = 0
        for i in range(2):
            out = self.blocks[i](x)[1]
            out *= 2.0  # ADL001
            total = total + self.out(out)
        return total


def run():
    torch.manual_seed(0)
    tower = Tower()
    tower(torch.randn(3, 4)).sum().backward()
    return [p.grad for p in tower.parameters() if p.grad is not None]
