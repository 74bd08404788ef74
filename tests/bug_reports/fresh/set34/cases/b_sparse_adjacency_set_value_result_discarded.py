"""Learnable edge weights with a `SparseTensor` adjacency (torch_sparse / PyTorch Geometric): the
model's forward calls `edge_index.set_value(self.edge_weight.sigmoid(), layout='coo')` as a
statement. `set_value` is out of place (it returns a new SparseTensor; `set_value_` is the in-place
one), so the result is thrown away, both GCN layers propagate over the unweighted adjacency, and
`model.edge_weight.grad` stays None: the edge weights never train. Nothing fails. The fix is to use
the returned tensor (`edge_index = edge_index.set_value(...)`), as PyG's own `gcn_norm` was fixed
for the same out-of-place `fill_value` (PR 1444).
Source: https://github.com/pyg-team/pytorch_geometric/issues/7401
(same API pitfall fixed in https://github.com/pyg-team/pytorch_geometric/pull/1444)
expect: silent"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class SparseTensor:
    """A minimal COO adjacency in the style of torch_sparse.SparseTensor."""

    def __init__(self, row, col, value=None, sparse_sizes=None):
        self.row, self.col, self.value = row, col, value
        self.sparse_sizes = sparse_sizes

    def t(self):
        return SparseTensor(self.col, self.row, self.value, self.sparse_sizes[::-1])

    def set_value_(self, value, layout=None):
        self.value = value
        return self

    def set_value(self, value, layout=None):
        return SparseTensor(self.row, self.col, value, self.sparse_sizes)

    def matmul(self, other):
        value = self.value if self.value is not None else torch.ones(self.row.numel())
        out = torch.zeros(self.sparse_sizes[0], other.size(-1), dtype=other.dtype)
        return out.index_add(0, self.row, other[self.col] * value.unsqueeze(-1))


class GCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels)

    def forward(self, x, adj_t):
        return adj_t.matmul(self.lin(x)) + self.lin(x)


class Net(torch.nn.Module):
    def __init__(self, num_features, num_classes, num_edges):
        super(Net, self).__init__()
        self.edge_weight = torch.nn.Parameter(torch.ones(num_edges))
        self.conv1 = GCNConv(num_features, 16)
        self.conv2 = GCNConv(16, num_classes)

    def forward(self, x, edge_index):
        edge_index.set_value(self.edge_weight.sigmoid(), layout='coo')
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index)
        return F.log_softmax(x, dim=1)


num_nodes = 10
num_features = 32
num_classes = 2
num_edges = 10
x = torch.randn(num_nodes, num_features)
y = torch.randint(0, num_classes, (num_nodes,))
edge_index = torch.randint(num_nodes, (2, num_edges))
edge_index = SparseTensor(row=edge_index[0], col=edge_index[1], sparse_sizes=(10, 10)).t()
model = Net(num_features, num_classes, num_edges)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

losses = []
for epoch in range(5):
    optimizer.zero_grad()
    output = model(x, edge_index)
    loss = F.nll_loss(output, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
print(model.edge_weight.grad)

result = {"losses": torch.stack(losses), "edge_weight": model.edge_weight.detach().clone()}
