# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 23
# trigger: a feature-attribution helper takes the derivative of a model's output along each input
#   coordinate with torch.func.jvp, the direction being the basis vector
#   F.one_hot(torch.tensor(k), num_features) (int64), expanded to the batch
# source: none found; the pattern as users write it
# results: derivatives
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def coordinate_derivatives(model, x):
    columns = []
    for k in range(x.shape[1]):
        basis = F.one_hot(torch.tensor(k), x.shape[1]).to(x.dtype).expand_as(x)  # PRIMARY
        _, derivative = torch.func.jvp(model, (x,), (basis,))
        columns.append(derivative.squeeze(1))
    return torch.stack(columns, dim=1)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.Softplus(), nn.Linear(6, 1))
derivatives = coordinate_derivatives(model, torch.randn(3, 4))
