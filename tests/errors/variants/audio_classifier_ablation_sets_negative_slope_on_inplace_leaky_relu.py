# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead.
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 31
# trigger: an audio-event classifier is built with nn.LeakyReLU(inplace=True); an activation
#   ablation (a helper in another file, run with model.apply()) sets each LeakyReLU's
#   negative_slope to -0.2 after construction
# source: none found; the pattern as users write it (an ablation that mutates built modules)
# helpers: lib_ablation31.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_ablation31 import make_leaky_slope  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Conv1d(1, 4, 5, stride=2), nn.LeakyReLU(inplace=True),
                      nn.Conv1d(4, 4, 5, stride=2), nn.LeakyReLU(inplace=True),
                      nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(4, 3))
model.apply(make_leaky_slope(-0.2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
waves, labels = torch.randn(4, 1, 64), torch.tensor([0, 2, 1, 0])
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(waves), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
