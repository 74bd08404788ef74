"""EvolveGCN-O from PyTorch Geometric Temporal, trained with the library's own example loop (the
cost summed over the snapshots, one `backward()` per epoch). The layer evolves its GCN weight
with a GRU and keeps the evolved weight on the module, `self.weight = W.squeeze(dim=0)`, so the
next forward starts from it. That is right within an epoch, but the first forward of the second
epoch starts from a weight computed by the first epoch's graph, which its `backward()` freed:
"RuntimeError: Trying to backward through the graph a second time (or directly access saved
tensors after they have already been freed)" at the second `cost.backward()`.
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/297 (also #305;
fixed for EvolveGCN-H by https://github.com/benedekrozemberczki/pytorch_geometric_temporal/pull/284
"fix weight in-place update": the evolved weight is no longer kept on the module but passed in
and returned, like GCLSTM's hidden state, and the loop starts each epoch from None).
expect: raises"""
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
        self.weight = None

    def forward(self, X, edge_index, edge_weight):
        if self.weight is None:
            W = self.initial_weight[None, :, :]
        else:
            W = self.weight[None, :, :]
        _, W = self.recurrent_layer(W, W)
        self.weight = W.squeeze(dim=0)
        return gcn_norm(edge_index, edge_weight, X.size(0)) @ X @ self.weight


class RecurrentGCN(nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = nn.Linear(node_features, 1)

    def forward(self, x, edge_index, edge_weight):
        h = self.recurrent(x, edge_index, edge_weight)
        return self.linear(torch.relu(h))


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
    for time, (x, ei, ew, y) in enumerate(train_dataset):
        y_hat = model(x, ei, ew)
        cost = cost + torch.mean((y_hat - y) ** 2)
    cost = cost / (time + 1)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
    costs.append(cost.detach())
result = {"costs": costs, "params": [p.detach().clone() for p in model.parameters()]}
