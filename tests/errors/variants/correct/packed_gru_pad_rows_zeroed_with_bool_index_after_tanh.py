# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [3, 5, 6]], which is output 0 of TanhBackward0, is at version 1; expected
#   version 0 instead.
# code: AD101 (catalogue: saved_tensor_modified)
# set: 22
# trigger: a sentence encoder runs an nn.GRU over pack_padded_sequence, unpacks with pad_packed_sequence,
#   squashes with torch.tanh and zeroes the padded rows with a boolean index assignment (out[pad] =
#   0.0, index_put_) before mean pooling
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class SentenceEncoder(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gru = nn.GRU(dim, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        out = torch.tanh(self.proj(out))
        pad = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        out = out.masked_fill(pad[..., None], 0.0)  # PRIMARY
        return out.sum(1) / lengths[:, None]


torch.manual_seed(0)
model = SentenceEncoder(4, 6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
lengths = torch.tensor([5, 3, 2])
losses = []
for step in range(3):
    x = torch.randn(3, 5, 4)
    loss = model(x, lengths).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
