"""Fresh: a global full backward hook (every module), and a block whose
in-place ReLU writes its convolution's output."""
import torch
import torch.nn as nn
from torch.nn.modules.module import register_module_full_backward_hook


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.act = nn.ReLU(inplace=True)  # expect: ADL025

    def forward(self, x):
        return self.act(self.conv(x))


def run():
    norms = []
    handle = register_module_full_backward_hook(lambda m, gi, go: norms.append(go[0].norm()))
    try:
        Block()(torch.rand(1, 2, 4, 4)).sum().backward()
    finally:
        handle.remove()
