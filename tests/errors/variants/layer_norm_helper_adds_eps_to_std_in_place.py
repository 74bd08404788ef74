# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 1]], which is output 0 of Sqrt, is at version 1; expected
#   version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 12
# helpers: lib_norm.py
# trigger: a hand-written layer norm in another file computes the standard deviation with sqrt() and
#   then adds epsilon to it in place (std += self.eps); sqrt saved its output for backward
# source: none found; the pattern as users write it (eps added after the square root, in place)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_norm import HandLayerNorm  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), HandLayerNorm(5), nn.Linear(5, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
