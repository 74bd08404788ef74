"""Learnable edge weights stored only in the graph's edata dict, so never registered.
Source: https://github.com/dmlc/dgl/issues/1579 (register self.etensor, then put it in edata)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Graph:
    """A small graph with DGL-like node and edge feature dicts."""

    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes
        self.ndata, self.edata = {}, {}

    def number_of_edges(self):
        return len(self.src)


class WeightedGraphConv(nn.Module):
    def __init__(self, g, in_feats, out_feats):
        super().__init__()
        self.g = g
        self.fc_self = nn.Linear(in_feats, out_feats)
        self.fc_neigh = nn.Linear(in_feats, out_feats)
        self.etensor = nn.Parameter(torch.randn(self.g.number_of_edges(), 1))
        self.g.edata['w'] = self.etensor

    def forward(self, feat):
        g = self.g
        messages = feat[g.src] * g.edata['w']
        neigh = torch.zeros(g.num_nodes, feat.shape[1]).index_add(0, g.dst, messages)
        return self.fc_self(feat) + self.fc_neigh(neigh)


num_nodes, n_classes = 12, 3
src = torch.randint(0, num_nodes, (40,))
dst = torch.randint(0, num_nodes, (40,))
g = Graph(src, dst, num_nodes)
features = torch.randn(num_nodes, 8)
labels = torch.randint(0, n_classes, (num_nodes,))
model = WeightedGraphConv(g, 8, n_classes)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(4):
    loss = F.cross_entropy(model(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {
    "losses": losses,
    "edge_weights": g.edata['w'].detach().clone(),
    "params": [p.detach().clone() for p in model.parameters()],
}
