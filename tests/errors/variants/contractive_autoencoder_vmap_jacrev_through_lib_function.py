# message: You tried to vmap over HardSigmoidSTE, but it does not have vmap support. Please override and implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 29
# trigger: a contractive autoencoder's training step adds the Frobenius norm of the encoder's
#   Jacobian per sample, computed as vmap(jacrev(self.encode)); the encoder's activation is a
#   straight-through hard sigmoid Function in another file, written with setup_context but without a
#   vmap rule (jacrev alone runs it, the vmap around it does not)
# source: none found; the pattern as users write it (per-sample Jacobian penalties with torch.func)
# helpers: lib_ste29.py
# results: losses, model
import os
import sys

import torch
from torch import nn
from torch.func import jacrev, vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_ste29 import HardSigmoidSTE  # noqa: E402


class ContractiveAutoencoder(nn.Module):
    def __init__(self, features=5, code=3, weight=0.1):
        super().__init__()
        self.encoder = nn.Linear(features, code)
        self.decoder = nn.Linear(code, features)
        self.weight = weight

    def encode(self, x):
        return HardSigmoidSTE.apply(self.encoder(x))

    def training_step(self, x):
        reconstruction = self.decoder(self.encode(x))
        jacobians = vmap(jacrev(self.encode))(x)
        contraction = jacobians.pow(2).sum((1, 2)).mean()
        return nn.functional.mse_loss(reconstruction, x) + self.weight * contraction


torch.manual_seed(0)
model = ContractiveAutoencoder()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for step in range(3):
    x = torch.randn(4, 5)
    optimizer.zero_grad()
    loss = model.training_step(x)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
