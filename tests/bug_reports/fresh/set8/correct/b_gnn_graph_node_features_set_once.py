"""Graph convolution on a mutable graph: node features set once, overwritten by each forward pass.
Source: https://github.com/dmlc/dgl/issues/33 (set the features at the start of every iteration)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NODES, FEATURES, CLASSES = 6, 5, 5


class Graph:
    """Holds node representations and a normalized adjacency, like DGLGraph did."""

    def __init__(self, adjacency):
        self.adjacency = adjacency
        self.node_repr = None

    def set_n_repr(self, h):
        self.node_repr = h

    def get_n_repr(self):
        return self.node_repr

    def update_all(self, update_func):
        accum = self.adjacency @ self.node_repr
        self.node_repr = update_func(accum)


class NodeModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, CLASSES)

    def forward(self, accum):
        return F.relu(self.linear(accum))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.updmod = NodeModule()

    def forward(self, g):
        g.update_all(self.updmod)
        return g


adjacency = torch.softmax(torch.randn(NODES, NODES), dim=1)
features = torch.randn(NODES, FEATURES)
labels = torch.randint(0, CLASSES, (NODES,))
gcn = GCN()
optimizer = torch.optim.SGD(gcn.parameters(), lr=0.1)
g = Graph(adjacency)
losses = []
for epoch in range(3):
    g.set_n_repr(features)
    gg = gcn(g)
    logits = gg.get_n_repr()
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in gcn.parameters()]}
