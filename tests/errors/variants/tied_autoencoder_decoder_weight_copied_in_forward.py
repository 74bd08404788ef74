# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 22
# trigger: a tied autoencoder keeps a separate decoder nn.Linear and ties it by copying the encoder's
#   transposed weight into it at the start of every forward
#   (self.decoder.weight.copy_(self.encoder.weight.t()))
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class TiedAutoencoder(nn.Module):
    def __init__(self, dim, code):
        super().__init__()
        self.encoder = nn.Linear(dim, code)
        self.decoder = nn.Linear(code, dim)

    def forward(self, x):
        self.decoder.weight.copy_(self.encoder.weight.t())  # PRIMARY
        return self.decoder(torch.relu(self.encoder(x)))


torch.manual_seed(0)
model = TiedAutoencoder(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(3):
    x = torch.randn(6, 8)
    loss = (model(x) - x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
