# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 27
# trigger: quantisation-aware training: a QuantLinear's forward gives its own weight, a leaf
#   nn.Parameter, to a fake-quantisation Function (another file) that rounds its input in place to save
#   memory and marks it dirty
# source: none found; the pattern as users write it (an in-place fake quantiser reused on weights after
#   activations)
# helpers: lib_fake_quant27.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_fake_quant27 import FakeQuantize  # noqa: E402


class QuantLinear(nn.Linear):
    def __init__(self, *args, bits=4, **kwargs):
        super().__init__(*args, **kwargs)
        self.bits = bits

    def forward(self, x):
        weight = FakeQuantize.apply(self.weight, self.bits)  # PRIMARY
        return F.linear(x, weight, self.bias)


torch.manual_seed(0)
model = nn.Sequential(QuantLinear(6, 8), nn.ReLU(), QuantLinear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    x, y = torch.randn(10, 6), torch.randn(10, 1)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
