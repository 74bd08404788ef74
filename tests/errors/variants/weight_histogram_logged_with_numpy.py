# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 9
# helpers: lib_weight_report.py
# trigger: an epoch-end callback in another file logs a histogram of every weight with
#   np.histogram, which converts the parameter (it requires grad) to a NumPy array
# source: none found; the pattern as users write it (TensorBoard-style weight histograms by hand)
# results: losses, histograms, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_weight_report import weight_histograms  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses, histograms = [], []
for epoch in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    histograms.append(weight_histograms(model))
