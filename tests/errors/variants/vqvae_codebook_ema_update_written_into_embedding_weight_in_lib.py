# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 25
# trigger: a VQ-VAE quantiser in a library module (lib_v25_vq.py) moves its codebook, an nn.Embedding whose
#   weight is a Parameter that requires grad, towards the encoder's outputs by an exponential moving
#   average with an indexed assignment `self.codebook.weight[used] = ...` inside forward, in
#   training mode, outside torch.no_grad()
# source: none found; the pattern as users write it (VQ-VAE-2's EMA codebook update)
# helpers: lib_v25_vq.py
# results: model, losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_v25_vq import EMAQuantizer  # noqa: E402


class VQAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 3)
        self.quantizer = EMAQuantizer(num_codes=4, dim=3)
        self.decoder = nn.Linear(3, 6)

    def forward(self, x):
        z = self.encoder(x)
        quantized, commitment = self.quantizer(z)
        return self.decoder(quantized), commitment


torch.manual_seed(0)
model = VQAutoencoder()
optimizer = torch.optim.Adam(list(model.encoder.parameters()) + list(model.decoder.parameters()), lr=1e-2)
data = torch.randn(16, 6)
losses = []
for step in range(3):
    reconstruction, commitment = model(data)
    loss = F.mse_loss(reconstruction, data) + 0.25 * commitment
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
