# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 10
# helpers: lib_preprocess.py
# trigger: a Jacobian penalty (input sensitivity regulariser) calls
#   torch.autograd.functional.jacobian on inputs standardised by a helper in another file decorated
#   with @torch.inference_mode(); jacobian asks the inference tensor to require grad itself
# source: none found; the pattern as users write it (Jacobian regularisation for robustness)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F
from torch.autograd.functional import jacobian

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_preprocess import standardise  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = standardise(torch.randn(4, 3)), torch.randn(4, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    sensitivity = jacobian(lambda inputs: model(inputs).sum(), x, create_graph=True)
    loss = F.mse_loss(model(x), y) + 0.1 * sensitivity.pow(2).sum()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
