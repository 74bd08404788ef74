"""EvolveGCN-O whose evolved weight is passed to a convolution that takes it as an argument (no new
Parameter): the GRU and the initial weight train; the weight is reset at each epoch.
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/80"""
import torch
import torch.nn as nn

torch.manual_seed(0)

NODES, CHANNELS, SNAPSHOTS, EPOCHS = 6, 4, 3, 3


def gcn_norm(adjacency):
    adjacency = adjacency + torch.eye(adjacency.shape[0])
    degree = adjacency.sum(dim=1)
    return adjacency / torch.sqrt(degree[:, None] * degree[None, :])


class GCNConv_Fixed_W(nn.Module):
    def forward(self, W, X, adjacency):
        return gcn_norm(adjacency) @ X @ W


class EvolveGCNO(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.empty(1, in_channels, in_channels))
        nn.init.xavier_uniform_(self.initial_weight[0])
        self.weight = None
        self.conv_layer = GCNConv_Fixed_W()
        self.recurrent_layer = nn.GRU(input_size=in_channels, hidden_size=in_channels, num_layers=1)

    def reinitialize_weight(self):
        self.weight = None

    def forward(self, X, adjacency):
        if self.weight is None:
            _, self.weight = self.recurrent_layer(self.initial_weight, self.initial_weight)
        else:
            _, self.weight = self.recurrent_layer(self.weight, self.weight)
        return self.conv_layer(self.weight.squeeze(dim=0), X, adjacency)


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
    model.recurrent.reinitialize_weight()
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
