"""A graph convolutional network whose learned adjacency stays in the graph, so the projections
that compute it train with the rest.
Source: https://github.com/queenie88/A-GCN/issues/4."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NODES, FEATURES, EMBED, HIDDEN, CLASSES = 20, 12, 8, 16, 3


class AdaptiveGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Linear(FEATURES, EMBED)
        self.theta = nn.Linear(FEATURES, EMBED)
        self.gc1 = nn.Linear(FEATURES, HIDDEN)
        self.gc2 = nn.Linear(HIDDEN, CLASSES)

    def adjacency(self, x):
        affinity = self.phi(x) @ self.theta(x).t()
        return torch.softmax(affinity, dim=-1)

    def forward(self, x):
        adj = self.adjacency(x)
        h = F.relu(adj @ self.gc1(x))
        return adj @ self.gc2(h)


features = torch.randn(NODES, FEATURES)
labels = torch.randint(0, CLASSES, (NODES,))
model = AdaptiveGCN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(25):
    loss = F.cross_entropy(model(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
