"""EvolveGCN-O (PyTorch Geometric Temporal, `evolvegcno.py`) on a sequence of graph snapshots: the
layer evolves its GCN weight with a GRU at every snapshot and stores the result back on the
convolution with `self.conv_layer.weight = torch.nn.Parameter(W.squeeze(dim=0))`. Wrapping the
GRU's output in a new `Parameter` makes it a fresh leaf: no gradient reaches the GRU or the initial
weight, and the optimizer, which holds the original parameters, never sees the new one. Only the
readout trains (no error, no warning).
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/80 ("I found that
the gradient function may be lost in the implementation of EvolveGCN ... the following line of
code"); the maintainers replaced it with a convolution that takes the evolved weight as an argument,
the weight kept on the layer and reset with `reinitialize_weight()` at each epoch.
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

NODES, CHANNELS, SNAPSHOTS, EPOCHS = 6, 4, 3, 3


def gcn_norm(adjacency):
    adjacency = adjacency + torch.eye(adjacency.shape[0])
    degree = adjacency.sum(dim=1)
    return adjacency / torch.sqrt(degree[:, None] * degree[None, :])


class GCNConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels, channels))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, X, adjacency):
        return gcn_norm(adjacency) @ X @ self.weight


class EvolveGCNO(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.conv_layer = GCNConv(in_channels)
        self.recurrent_layer = nn.GRU(input_size=in_channels, hidden_size=in_channels, num_layers=1)

    def forward(self, X, adjacency):
        W = self.conv_layer.weight[None, :, :]
        X_tilde, W = self.recurrent_layer(W, W)
        self.conv_layer.weight = torch.nn.Parameter(W.squeeze(dim=0))
        return self.conv_layer(X, adjacency)


class RecurrentGCN(nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = nn.Linear(node_features, 1)

    def forward(self, x, adjacency):
        return self.linear(torch.relu(self.recurrent(x, adjacency)))


snapshots = []
for _ in range(SNAPSHOTS):
    adjacency = (torch.rand(NODES, NODES) > 0.6).float()
    adjacency = ((adjacency + adjacency.t()) > 0).float().fill_diagonal_(0)
    snapshots.append((torch.randn(NODES, CHANNELS), adjacency, torch.randn(NODES, 1)))

model = RecurrentGCN(node_features=CHANNELS)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
costs = []
for epoch in range(EPOCHS):
    cost = 0
    for x, adjacency, y in snapshots:
        y_hat = model(x, adjacency)
        cost = cost + torch.mean((y_hat - y) ** 2)
    cost = cost / SNAPSHOTS
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
    costs.append(cost.detach())

result = {
    "costs": torch.stack(costs),
    "gru": [p.detach().clone() for p in model.recurrent.recurrent_layer.parameters()],
    "linear": [p.detach().clone() for p in model.linear.parameters()],
}
