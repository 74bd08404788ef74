# message: If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor. This is not supported by the current autograd engine. You should either make sure the input is not a view (using .clone() for example) or make your Function only return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor and a second one that does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do so.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 30
# trigger: a normalising flow's affine coupling layer (a helper in another file) applies an in-place
#   custom Function to the second half of its activations, x[:, half:] (a view), and the Function
#   returns the log-determinant beside the dirty tensor
# source: none found; the pattern as users write it (a memory-saving in-place coupling of a flow)
# helpers: lib_coupling30.py
# results: losses, model
import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_coupling30 import AffineCoupling  # noqa: E402


class Flow(nn.Module):
    def __init__(self, features=4):
        super().__init__()
        self.mix = nn.Linear(features, features)
        self.coupling = AffineCoupling(features)

    def forward(self, x):
        z, logdet = self.coupling(self.mix(x))
        log_prob = -0.5 * (z ** 2).sum(1) - 0.5 * z.size(1) * math.log(2 * math.pi)
        return -(log_prob + logdet).mean()


torch.manual_seed(0)
model = Flow()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(6, 4))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
