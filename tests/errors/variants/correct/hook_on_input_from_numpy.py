# message: cannot register a hook on a tensor that doesn't require gradient
# code: AD116 (catalogue: hook_no_grad)
# set: 2
# trigger: an input converted from a NumPy array gets a register_hook() to collect its gradient
#   (input attribution), but it does not require grad
# source: none found; the pattern as users write it
# results: collected, model
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
collected = []
signal = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
inputs = torch.from_numpy(signal).float().requires_grad_()
inputs.register_hook(collected.append)  # PRIMARY
model(inputs).sum().backward()
