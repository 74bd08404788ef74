# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to
#   get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for
#   more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 25
# trigger: a keyword-spotting front end in a library module (lib_v25_frontend.py) computes log filter-bank
#   features in a __call__ decorated with @torch.inference_mode() (it has no weights); SpecAugment's
#   time masking then zeroes a range of frames of those features by slice assignment in the training
#   loop
# source: none found; the pattern as users write it (SpecAugment masking on precomputed features)
# helpers: lib_v25_frontend.py
# results: classifier, losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_v25_frontend import LogFilterbank  # noqa: E402


def time_mask(spectrogram, start, width):
    """SpecAugment's time masking: silence `width` frames from `start` in every example."""
    keep = torch.ones(spectrogram.shape[-1])
    keep[start:start + width] = 0.0
    return spectrogram * keep


torch.manual_seed(0)
frontend = LogFilterbank()
classifier = nn.Sequential(nn.Conv1d(5, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(4, 2))
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
waveforms = torch.randn(3, 96)
labels = torch.tensor([0, 1, 1])
losses = []
for step in range(3):
    features = frontend(waveforms)
    features = time_mask(features, start=2 + step, width=3)
    loss = F.cross_entropy(classifier(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
