# message: cat(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 4
# trigger: a multi-head scorer concatenates its heads' outputs into a preallocated buffer
#   (torch.cat(..., out=self.scores)) to avoid an allocation per step
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class MultiHeadScorer(nn.Module):
    def __init__(self, heads, batch):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(4, 1) for _ in range(heads))
        self.register_buffer("scores", torch.empty(batch, heads))

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=1, out=self.scores)  # PRIMARY


torch.manual_seed(0)
model = MultiHeadScorer(3, 6)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
