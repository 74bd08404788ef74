# message: Function 'PowBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 30
# trigger: a Trainer-like class with a detect_anomaly flag runs each step under
#   torch.autograd.detect_anomaly(); the focal loss of a helper in another file raises (1 - p_t) to
#   gamma = 0.5, and a confidently right prediction (p_t == 1 in float32) gives 0 ** -0.5 = inf in
#   pow's derivative, times the zero cross-entropy: NaN
# source: https://github.com/kornia/kornia/issues/918 (NaN gradients of a focal loss with 0 < gamma < 1
#   where the sigmoid saturates)
# helpers: lib_focal30.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_focal30 import binary_focal_loss  # noqa: E402


class Trainer:
    def __init__(self, model, detect_anomaly=False):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.detect_anomaly = detect_anomaly

    def training_step(self, features, targets):
        logits = self.model(features).squeeze(-1)
        return binary_focal_loss(logits, targets)

    def fit(self, batches):
        losses = []
        for features, targets in batches:
            self.optimizer.zero_grad()
            with torch.autograd.detect_anomaly(check_nan=self.detect_anomaly):
                loss = self.training_step(features, targets)
                loss.backward()
            self.optimizer.step()
            losses.append(loss.detach())
        return losses


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
batches = []
for _ in range(3):
    features = torch.randn(6, 4)
    targets = (model(features).squeeze(-1) > 0).float().detach()
    features[0] *= 200.0  # one anchor the model is certain about
    targets[0] = float(model(features[:1]).item() > 0)
    batches.append((features, targets))
losses = Trainer(model, detect_anomaly=True).fit(batches)
