# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 24
# helpers: lib_feature_bank24.py
# trigger: a linear probe trains on features that a library FeatureBank computes from a frozen conv
#   backbone inside torch.inference_mode(); the library's standardizer caches its statistics keyed on
#   the features' _version, which inference tensors do not have
# source: none found; the pattern as users write it (linear probing of a frozen backbone)
# results: probe.weight, probe.bias, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_feature_bank24 import CachedStandardizer, FeatureBank  # noqa: E402

torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(2)).eval()
images = torch.randn(8, 3, 6, 6)
labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
features = FeatureBank(backbone).build(images)
standardize = CachedStandardizer()
probe = nn.Linear(16, 3)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
losses = []
for epoch in range(3):
    loss = nn.functional.cross_entropy(probe(standardize(features)), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
