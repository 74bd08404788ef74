# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward calculation with negative slope
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 9
# helpers: lib_odd_activation.py
# trigger: an activation helper in another file makes an odd, sign-flipping activation with
#   F.leaky_relu_ (the in-place function) and a negative slope, to save memory
# source: none found; the pattern as users write it (in-place activations to save memory)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_odd_activation import mirrored_relu  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 4)
        self.second = nn.Linear(4, 1)

    def forward(self, x):
        return self.second(mirrored_relu(self.first(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
