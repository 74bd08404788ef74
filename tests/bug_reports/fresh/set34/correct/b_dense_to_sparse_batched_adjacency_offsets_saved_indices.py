"""PyTorch Geometric's `dense_to_sparse`, batched (three-dimensional) branch: it takes
`edge_index = flatten_adj.nonzero().t()`, reads the edge weights with
`flatten_adj[edge_index[0], edge_index[1]]` (advanced indexing saves both index rows for its
backward), then shifts the column indices of each graph with the in-place
`edge_index[1] += offset[edge_index[0]]`. With a learned (differentiable) batched adjacency the
first backward() fails with "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.LongTensor [...]] ... is at version 2; expected version 0".
The 2D branch never mutates `edge_index`. The fix (PR 10758) builds the shifted `edge_index`
out of place.
Source: https://github.com/pyg-team/pytorch_geometric/issues/10318
(fix: https://github.com/pyg-team/pytorch_geometric/pull/10758)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def dense_to_sparse(adj):
    """Dense (batched) adjacency -> (edge_index, edge_attr), graphs stacked block-diagonally."""
    if adj.dim() == 2:
        edge_index = adj.nonzero().t()
        edge_attr = adj[edge_index[0], edge_index[1]]
        return edge_index, edge_attr
    flatten_adj = adj.view(-1, adj.size(-1))
    edge_index = flatten_adj.nonzero().t()
    edge_attr = flatten_adj[edge_index[0], edge_index[1]]
    offset = torch.arange(0, adj.size(0) * adj.size(2), adj.size(2), device=adj.device)
    offset = offset.repeat_interleave(adj.size(1))
    edge_index = torch.stack([edge_index[0], edge_index[1] + offset[edge_index[0]]], dim=0)
    return edge_index, edge_attr


class GraphConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x, edge_index, edge_weight):
        msg = self.lin(x)[edge_index[0]] * edge_weight.unsqueeze(-1)
        out = torch.zeros(x.size(0), msg.size(-1), dtype=msg.dtype).index_add(0, edge_index[1], msg)
        deg = torch.zeros(x.size(0), dtype=msg.dtype).index_add(0, edge_index[1], edge_weight)
        return out / deg.clamp(min=1e-6).unsqueeze(-1) + self.lin(x)


class GraphLearner(nn.Module):
    """Learns one adjacency per sample from the node signals (graph structure learning)."""

    def __init__(self, in_channels, hidden, k=3):
        super().__init__()
        self.embed = nn.Linear(in_channels, hidden)
        self.k = k

    def forward(self, x):  # x: [batch, nodes, features]
        h = torch.tanh(self.embed(x))
        scores = torch.relu(torch.tanh(h @ h.transpose(1, 2)))
        topk = scores.topk(self.k, dim=-1).indices
        mask = torch.zeros_like(scores).scatter_(-1, topk, 1.0)
        return scores * mask


class SensorForecaster(nn.Module):
    def __init__(self, window=8, hidden=16, horizon=2):
        super().__init__()
        self.learner = GraphLearner(window, hidden)
        self.conv1 = GraphConv(window, hidden)
        self.conv2 = GraphConv(hidden, horizon)

    def forward(self, x):
        batch, nodes, _ = x.shape
        adj = self.learner(x)
        edge_index, edge_weight = dense_to_sparse(adj)
        h = x.reshape(batch * nodes, -1)
        h = F.relu(self.conv1(h, edge_index, edge_weight))
        return self.conv2(h, edge_index, edge_weight).view(batch, nodes, -1)


signals = torch.randn(4, 6, 10).cumsum(-1)
x, y = signals[..., :8], signals[..., 8:]
model = SensorForecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
for epoch in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "embed": model.learner.embed.weight.detach().clone()}
