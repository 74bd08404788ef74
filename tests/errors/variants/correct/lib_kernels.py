import torch
from torch import nn


class PreallocatedLinear(nn.Module):
    """A linear layer that writes its result into a buffer allocated once (to save allocations)."""

    def __init__(self, in_features, out_features, batch):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.3)
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.register_buffer("workspace", torch.empty(batch, out_features))

    def forward(self, x):
        self.workspace = torch.addmm(self.bias, x, self.weight.t())  # PRIMARY
        return self.workspace
