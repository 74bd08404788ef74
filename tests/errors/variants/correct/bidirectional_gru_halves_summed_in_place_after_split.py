# message: Output 0 of Split is a view and is being modified inplace. This view is the
#   output of a function that returns multiple views. Such functions do not allow the output views to
#   be modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 20
# trigger: a bidirectional nn.GRU tagger splits its output into the forward and backward directions
#   with out.split(hidden, dim=-1) and sums them with forward_half.add_(backward_half)
# source: none found; the pattern as users write it (summing a bidirectional RNN's directions)
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class Tagger(nn.Module):
    def __init__(self, dim, hidden, tags):
        super().__init__()
        self.hidden = hidden
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(hidden, tags)

    def forward(self, x):
        out, _ = self.gru(x)
        forward_half, backward_half = out.split(self.hidden, dim=-1)
        forward_half = forward_half + backward_half  # PRIMARY
        return self.head(forward_half)


torch.manual_seed(0)
model = Tagger(5, 6, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    x = torch.randn(2, 7, 5)
    tags = torch.randint(0, 3, (2, 7))
    loss = nn.functional.cross_entropy(model(x).reshape(-1, 3), tags.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
