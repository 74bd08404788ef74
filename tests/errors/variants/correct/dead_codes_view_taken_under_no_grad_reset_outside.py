# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given
#   that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by
#   moving both the view and the inplace either both inside the no_grad block (if you don't want the
#   inplace to be tracked) or both outside (if you want the inplace to be tracked).
# code: AD105 (catalogue: view_nograd_inplace)
# set: 22
# trigger: a vector quantizer finds its unused codes inside a torch.no_grad() block and takes the first
#   rows of its codebook parameter there (dead = self.codebook[:n]), then resets them from the batch
#   with dead.copy_(...) after the block
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Quantizer(nn.Module):
    def __init__(self, codes, dim):
        super().__init__()
        self.codebook = nn.Parameter(torch.randn(codes, dim))
        self.register_buffer("usage", torch.zeros(codes))

    def forward(self, z):
        d = torch.cdist(z, self.codebook)
        idx = d.argmin(1)
        q = self.codebook[idx]
        return z + (q - z).detach(), q

    def restart_dead_codes(self, z):
        with torch.no_grad():
            n = int((self.usage == 0).sum())
            dead = self.codebook[:n]
            dead.copy_(z[:n])  # PRIMARY


torch.manual_seed(0)
encoder = nn.Linear(6, 4)
model = Quantizer(5, 4)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(model.parameters()), lr=1e-2)
losses = []
for step in range(3):
    x = torch.randn(8, 6)
    z = encoder(x)
    zq, q = model(z)
    loss = zq.pow(2).mean() + (q - z.detach()).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if step == 1:
        model.restart_dead_codes(z.detach())
