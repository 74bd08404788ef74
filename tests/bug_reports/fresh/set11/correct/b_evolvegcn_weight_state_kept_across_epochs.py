"""EvolveGCN-O keeps its evolved weight on the module, so each epoch starts from the last one's freed graph.
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/297 (PR #284: pass the weight in and out)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def gcn_norm(edge_index, edge_weight, n):
    adj = torch.zeros(n, n).index_put((edge_index[1], edge_index[0]), edge_weight, accumulate=True)
    adj = adj + torch.eye(n)
    deg_inv_sqrt = adj.sum(dim=1).pow(-0.5)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]


class EvolveGCNO(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.empty(in_channels, in_channels))
        nn.init.xavier_uniform_(self.initial_weight)
        self.recurrent_layer = nn.GRU(input_size=in_channels, hidden_size=in_channels, num_layers=1)

    def forward(self, X, edge_index, edge_weight, weight=None):
        if weight is None:
            W = self.initial_weight[None, :, :]
        else:
            W = weight[None, :, :]
        _, W = self.recurrent_layer(W, W)
        weight = W.squeeze(dim=0)
        return gcn_norm(edge_index, edge_weight, X.size(0)) @ X @ weight, weight


class RecurrentGCN(nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = nn.Linear(node_features, 1)

    def forward(self, x, edge_index, edge_weight, weight=None):
        h, weight = self.recurrent(x, edge_index, edge_weight, weight)
        return self.linear(torch.relu(h)), weight


n_nodes, n_features = 20, 4
edge_index = torch.randint(0, n_nodes, (2, 60))
train_dataset = []
for t in range(5):
    x = torch.randn(n_nodes, n_features)
    train_dataset.append((x, edge_index, torch.rand(60), x[:, :1].tanh()))

model = RecurrentGCN(node_features=n_features)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
model.train()
costs = []
for epoch in range(3):
    cost = 0
    weight = None
    for time, (x, ei, ew, y) in enumerate(train_dataset):
        y_hat, weight = model(x, ei, ew, weight)
        cost = cost + torch.mean((y_hat - y) ** 2)
    cost = cost / (time + 1)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
    costs.append(cost.detach())
result = {"costs": costs, "params": [p.detach().clone() for p in model.parameters()]}
