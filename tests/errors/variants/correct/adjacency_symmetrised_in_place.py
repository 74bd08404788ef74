# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location.
# code: AD203 (catalogue: overlap_inplace)
# set: 4
# trigger: a graph layer learns its adjacency and makes it symmetric in place inside forward
#   (adj.add_(adj.T)), called from a training loop
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class LearnedGraphLayer(nn.Module):
    def __init__(self, nodes, features):
        super().__init__()
        self.edge_logits = nn.Parameter(torch.randn(nodes, nodes))
        self.proj = nn.Linear(features, features)

    def forward(self, x):
        adj = torch.sigmoid(self.edge_logits)
        adj = adj + adj.T  # PRIMARY
        return adj @ self.proj(x)


torch.manual_seed(0)
model = LearnedGraphLayer(5, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(5, 3), torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
