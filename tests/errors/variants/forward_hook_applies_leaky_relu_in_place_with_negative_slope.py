# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not supported.
#   This is caused by calling in-place forward function with a negative slope, please call out-of-place
#   version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting
#   in-place leakRelu backward calculation with negative slope
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 27
# trigger: a config-driven MLP gets its activations from forward hooks that a helper in another file
#   registers on every hidden nn.Linear; the hook applies F.leaky_relu(output, slope, inplace=True) to
#   the layer's output, and the config's "concatenated-sign" experiment sets slope = -0.1
# source: none found; the pattern as users write it (activations injected by hooks, an in-place
#   activation to save memory, a negative slope from a sweep)
# helpers: lib_hook_activations27.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_hook_activations27 import attach_activations  # noqa: E402

config = {"widths": [6, 12, 12, 1], "slope": -0.1, "lr": 0.05}

torch.manual_seed(0)
widths = config["widths"]
model = nn.Sequential(*[nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])])
attach_activations(model, config)
optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
losses = []
for _ in range(3):
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
