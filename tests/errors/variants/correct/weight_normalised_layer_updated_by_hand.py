# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 11
# trigger: a hand-written SGD step updates the layer's weight and bias by name
#   ([layer.weight, layer.bias]); the layer went through the legacy torch.nn.utils.weight_norm,
#   which makes `weight` a tensor computed from weight_g and weight_v (not a leaf), so its .grad is
#   None
# source: none found; the pattern as users write it (manual updates written for a plain nn.Linear,
#   kept after weight normalisation was added)
# results: losses, layer
import warnings

import torch
from torch import nn

warnings.simplefilter("ignore", FutureWarning)
torch.manual_seed(0)
layer = nn.utils.weight_norm(nn.Linear(3, 1))
x, y = torch.randn(6, 3), torch.randn(6, 1)
trained = list(layer.parameters())  # PRIMARY
losses = []
for _ in range(2):
    layer.zero_grad()
    loss = (layer(x) - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for parameter in trained:
            parameter -= 0.1 * parameter.grad
    losses.append(loss.item())
