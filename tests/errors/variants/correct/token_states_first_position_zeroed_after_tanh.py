# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 20
# trigger: a sequence encoder's projection goes through torch.tanh, and the position of the start
#   token is then zeroed by index assignment (h[:, 0] = 0.0, a CopySlices write into tanh's output,
#   which tanh saved for backward) before an nn.GRU reads the states
# source: none found; the pattern as users write it (a position blanked by slice assignment)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Encoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens):
        h = torch.tanh(self.proj(self.embed(tokens)))
        h = torch.cat([torch.zeros_like(h[:, :1]), h[:, 1:]], dim=1)  # PRIMARY
        out, last = self.gru(h)
        return self.head(last[-1])


torch.manual_seed(0)
model = Encoder(20, 8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(3):
    tokens = torch.randint(0, 20, (4, 7))
    labels = torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
