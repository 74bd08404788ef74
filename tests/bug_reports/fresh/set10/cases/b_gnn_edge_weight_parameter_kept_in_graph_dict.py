"""Graph convolution with learnable edge weights, written the way the DGL report did: in
`__init__`, `self.g.edata['w'] = nn.Parameter(...)`. The Parameter is stored in the graph's edge
feature dict, not as an attribute of the module, so it is never registered: `model.parameters()`
and the optimizer do not hold it, and the edge weights keep their initial values (they get a
`.grad` that nothing reads) while the loss goes down through the other weights. Nothing is raised.
Source: https://github.com/dmlc/dgl/issues/1579 ("self.g.edata['w'] is not shown in the
learnable parameter set"; the answer: `self.etensor = nn.Parameter(...)`, then
`self.g.edata['w'] = self.etensor`).
expect: silent"""
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
        self.g.edata['w'] = nn.Parameter(torch.randn(self.g.number_of_edges(), 1))

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
