# message: mean(): functions with out=... arguments don't support automatic differentiation, but one of
#   the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 13
# trigger: a pooling layer averages each segment of a sequence into a preallocated [segments,
#   features] tensor with torch.mean(..., out=pooled[index]) in a loop, to avoid a torch.stack
# source: none found; the pattern as users write it (out= rows of a preallocated result)
# results: model, losses
import torch
from torch import nn


class SegmentPooling(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(3, 4)
        self.classify = nn.Linear(4, 2)

    def forward(self, x, boundaries):
        h = torch.tanh(self.encode(x))
        pooled = torch.empty(len(boundaries) - 1, h.shape[-1])
        for index, (start, end) in enumerate(zip(boundaries[:-1], boundaries[1:])):
            torch.mean(h[start:end], dim=0, out=pooled[index])  # PRIMARY
        return self.classify(pooled)


torch.manual_seed(0)
model = SegmentPooling()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, boundaries, labels = torch.randn(7, 3), [0, 3, 5, 7], torch.tensor([0, 1, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x, boundaries), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
