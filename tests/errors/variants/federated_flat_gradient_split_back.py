# message: attempting to assign a gradient of size '[12]' to a tensor of size '[4, 3]'. Please
#   ensure that the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 5
# trigger: federated averaging: two clients' gradients are flattened for exchange, averaged, and a
#   helper in another file (lib_comm.py) splits the flat vector with torch.split and assigns each
#   piece to .grad without its shape
# source: none found; the pattern as users write it
# helpers: lib_comm.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_comm import flatten_gradients, load_flat_gradient  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(3, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
clients = [(torch.randn(5, 3), torch.randn(5, 4)) for _ in range(2)]
losses = []
for _ in range(2):
    flats = []
    for x, y in clients:
        loss = F.mse_loss(model(x), y)
        flats.append(flatten_gradients(torch.autograd.grad(loss, list(model.parameters()))))
        losses.append(loss.item())
    optimizer.zero_grad()
    load_flat_gradient(model, torch.stack(flats).mean(0))
    optimizer.step()
