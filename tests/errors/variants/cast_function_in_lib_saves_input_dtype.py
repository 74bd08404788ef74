# message: save_for_backward can only save variables, but argument 0 is of type torch.dtype
# code: AD122 (catalogue: save_for_backward_non_tensor)
# set: 30
# trigger: a helper in another file casts a block's activations to bfloat16 with a custom Function that
#   keeps the input's dtype for backward with ctx.save_for_backward(x.dtype); the model calls it inside
#   forward, run by a training loop
# source: https://github.com/pytorch/tutorials/issues/2797 (the tutorial's "cache arbitrary objects ...
#   using the ctx.save_for_backward method" against the documentation's "only with tensors")
# helpers: lib_precision30.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_precision30 import cast_activation  # noqa: E402


class LowPrecisionMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(5, 8)
        self.out = nn.Linear(8, 2).to(torch.bfloat16)

    def forward(self, x):
        hidden = torch.tanh(self.inp(x))
        return self.out(cast_activation(hidden)).float()


torch.manual_seed(0)
model = LowPrecisionMlp()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    x, y = torch.randn(4, 5), torch.randn(4, 2)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
