# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([12]) and output[0] has a shape of
#   torch.Size([4, 3]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 10
# helpers: lib_curvature.py
# trigger: a sharpness probe in another file runs power iteration with Hessian-vector products; the
#   flat direction vector is split into one piece per parameter with split(numels) but the pieces are
#   not reshaped, so grad_outputs has 1-d pieces for 2-d weights
# source: none found; the pattern as users write it (top Hessian eigenvalue by power iteration)
# results: losses, sharpness, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_curvature import top_hessian_eigenvalue  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses, sharpness = [], []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    sharpness.append(top_hessian_eigenvalue(loss, list(model.parameters())).item())
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
