# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 8
# helpers: lib_calibration.py
# trigger: a training step picks the hard examples above a percentile of the model's scores, with
#   a helper in another file that calls np.percentile on the scores (numpy converts the tensor,
#   which requires grad; the error is raised inside numpy)
# source: none found; the pattern as users write it
# results: thresholds, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_calibration import calibrate_threshold  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
thresholds = []
for _ in range(2):
    x, y = torch.randn(8, 3), torch.randn(8)
    optimizer.zero_grad()
    scores = model(x).squeeze(-1)
    threshold = calibrate_threshold(scores, 75)
    hard = (scores >= threshold).float()
    loss = (hard * (scores - y) ** 2).sum() / hard.sum()
    loss.backward()
    optimizer.step()
    thresholds.append(threshold)
