# message: You tried to vmap over SoftThreshold, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# helpers: lib_soft_threshold.py
# set: 20
# trigger: a sparse autoencoder's contractive penalty takes each example's Jacobian of its code with
#   torch.func.vmap(torch.func.jacrev(model.encode)) over the batch; the encoder's soft threshold is a
#   Function in another file with forward and setup_context but no vmap rule
# source: none found; the pattern as users write it (contractive penalties by jacrev)
# results: model, losses
import os
import sys

import torch
from torch import nn
from torch.func import jacrev, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_soft_threshold import soft_threshold  # noqa: E402


class SparseAutoencoder(nn.Module):
    def __init__(self, dim, code):
        super().__init__()
        self.encoder = nn.Linear(dim, code)
        self.decoder = nn.Linear(code, dim)

    def encode(self, x):
        return soft_threshold(self.encoder(x))


torch.manual_seed(0)
model = SparseAutoencoder(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(2):
    x = torch.randn(6, 4)
    code = model.encode(x)
    jac = vmap(jacrev(model.encode))(x)
    loss = nn.functional.mse_loss(model.decoder(code), x) + 0.1 * jac.pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
