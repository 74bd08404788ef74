"""Robust node classification on a noisy graph (RTGNN): an edge estimator scores node pairs with
the inner product of their GCN representations, keeps the positive part with `F.relu` and then
drops weak edges in place, `estimated_weights[estimated_weights < self.args.tau] = 0`. ReLU saves
its output for backward, so the masked write makes `total_loss.backward()` raise "one of the
variables needed for gradient computation has been modified by an inplace operation: [...],
which is output 0 of ReluBackward0, is at version 1; expected version 0 instead". The change:
threshold out of place (`masked_fill`), which keeps the same weights and gradients.
Source: https://github.com/GhostQ99/RobustTrainingGNN/issues/3
expect: raises"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

n_nodes, n_feat, n_hidden, n_classes = 12, 8, 16, 3
args = SimpleNamespace(tau=0.05, edge_hidden=16, alpha=0.3)


def normalized_adjacency(edge_index, weights, n):
    adj = torch.zeros(n, n).index_put((edge_index[0], edge_index[1]), weights, accumulate=True)
    adj = adj + torch.eye(n)
    deg = adj.sum(1)
    return adj / deg.unsqueeze(1)


class GCN(nn.Module):
    def __init__(self, nin, nhid, nout):
        super().__init__()
        self.lin1 = nn.Linear(nin, nhid)
        self.lin2 = nn.Linear(nhid, nout)

    def forward(self, x, edge_index, edge_weight):
        adj = normalized_adjacency(edge_index, edge_weight, x.shape[0])
        h = torch.tanh(adj @ self.lin1(x))
        return adj @ self.lin2(h)


class EstimateAdj(nn.Module):
    def __init__(self, nfea, args):
        super().__init__()
        self.estimator = GCN(nfea, args.edge_hidden, args.edge_hidden)
        self.args = args

    def forward(self, edge_index, features):
        representations = self.estimator(features, edge_index, torch.ones(edge_index.shape[1]))
        representations = F.normalize(representations, dim=-1)
        pos = (representations[edge_index[0]] * representations[edge_index[1]]).sum(1)
        rec_loss = F.mse_loss(pos, torch.ones_like(pos))
        return representations, rec_loss

    def get_estimated_weigths(self, edge_index, representations, origin_w=None):
        x0 = representations[edge_index[0]]
        x1 = representations[edge_index[1]]
        output = torch.sum(torch.mul(x0, x1), dim=1)
        estimated_weights = F.relu(output)
        if estimated_weights.shape[0] != 0:
            estimated_weights[estimated_weights < self.args.tau] = 0
            if origin_w is not None:
                estimated_weights = origin_w + estimated_weights * (1 - origin_w)
        return estimated_weights, None


features = torch.randn(n_nodes, n_feat)
labels = torch.randint(0, n_classes, (n_nodes,))
edge_index = torch.randint(0, n_nodes, (2, 30))
pred_edge_index = torch.randint(0, n_nodes, (2, 20))
idx_train = torch.arange(0, 8)

estimator = EstimateAdj(n_feat, args)
predictor = GCN(n_feat, n_hidden, n_classes)
optimizer = torch.optim.Adam(list(estimator.parameters()) + list(predictor.parameters()), lr=0.01)

losses = []
for epoch in range(4):
    optimizer.zero_grad()
    representations, rec_loss = estimator(edge_index, features)
    all_edges = torch.cat([edge_index, pred_edge_index], dim=1)
    origin_w = torch.cat([torch.ones(edge_index.shape[1]), torch.zeros(pred_edge_index.shape[1])])
    predictor_weights, _ = estimator.get_estimated_weigths(all_edges, representations, origin_w)
    log_pred = predictor(features, all_edges, predictor_weights)
    loss_pred = F.cross_entropy(log_pred[idx_train], labels[idx_train])
    total_loss = loss_pred + args.alpha * rec_loss
    total_loss.backward()
    optimizer.step()
    losses.append(total_loss.detach())

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(estimator.parameters()) + list(predictor.parameters())]}
