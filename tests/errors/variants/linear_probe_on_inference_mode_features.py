# message: Inference tensors cannot be saved for backward. To work around you can make a clone to
#   get a normal tensor and use it in autograd.
# code: AD109 (catalogue: inference_saved)
# set: 5
# trigger: a linear probe trained on features of a frozen backbone; the extractor (another file,
#   lib_features.py) computes them in a method decorated with @torch.inference_mode(), and the
#   probe's nn.Linear saves them for backward
# source: https://github.com/facebookresearch/dinov2/issues/399
# helpers: lib_features.py
# results: losses, probe
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_features import FrozenExtractor  # noqa: E402

extractor = FrozenExtractor()
torch.manual_seed(0)
probe = nn.Linear(5, 3)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
images, labels = torch.randn(8, 6), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
features = extractor.extract(images)  # PRIMARY
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(probe(features), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
