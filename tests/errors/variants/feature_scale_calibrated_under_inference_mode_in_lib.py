# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in
#   inference mode in computation tracked by autograd.
# code: AD109 (catalogue: inference_saved_decorator)
# set: 21
# trigger: a calibration helper in another file, decorated with @torch.inference_mode(), computes a
#   per-feature scale from warm-up batches; the model stores it as a plain attribute and multiplies
#   its encoder's output by it in forward (mul saves the scale)
# source: none found; the pattern as users write it (feature standardisation from a warm-up pass)
# helpers: lib_feature_calibration.py
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_feature_calibration import calibrate_scale  # noqa: E402


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 6)
        self.head = nn.Linear(6, 1)
        self.scale = torch.ones(6)

    def forward(self, x):
        return self.head(self.encoder(x) * self.scale)


torch.manual_seed(0)
model = Regressor()
model.scale = calibrate_scale(model.encoder, [torch.randn(8, 4) for _ in range(3)])
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
