# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in
#   inference mode in computation tracked by autograd. To work around this, you can make a clone to get
#   a normal tensor and use it in autograd, or use `torch.no_grad()` instead of
#   `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 12
# trigger: a positional encoding module builds its sinusoidal table in __init__ inside
#   torch.inference_mode() ("no gradients needed") and registers it as a buffer; forward multiplies
#   it by a learned gate, which saves the table for backward
# source: none found; the pattern as users write it (constant tables built under inference_mode)
# results: losses, model
import math

import torch
from torch import nn


class GatedPositions(nn.Module):
    def __init__(self, length, dim):
        super().__init__()
        with torch.inference_mode():  # PRIMARY
            position = torch.arange(length).unsqueeze(1)
            frequency = torch.exp(torch.arange(0, dim, 2) * (-math.log(100.0) / dim))
            table = torch.cat([torch.sin(position * frequency), torch.cos(position * frequency)], dim=1)
        self.register_buffer("table", table)
        self.gate = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, tokens):
        return tokens + self.gate * self.table


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), GatedPositions(3, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
