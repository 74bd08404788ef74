# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 20
# trigger: the sensitivity of a Poisson rate model to its observed counts (torch.bincount, int64) is
#   taken with torch.func.jvp at counts.float(); the direction is made with torch.ones_like(counts),
#   which keeps the counts' integer dtype
# source: none found; the pattern as users write it (directions made "like" the raw data)
# results: rate, sensitivity
import os
import sys

import torch
from torch import nn
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class RateModel(nn.Module):
    def __init__(self, bins):
        super().__init__()
        self.mix = nn.Linear(bins, bins)

    def forward(self, counts):
        return nn.functional.softplus(self.mix(torch.log1p(counts)))


torch.manual_seed(0)
events = torch.randint(0, 6, (40,))
counts = torch.bincount(events, minlength=6)
model = RateModel(6)
direction = torch.ones_like(counts, dtype=torch.float32)  # PRIMARY
rate, sensitivity = jvp(model, (counts.float(),), (direction,))
