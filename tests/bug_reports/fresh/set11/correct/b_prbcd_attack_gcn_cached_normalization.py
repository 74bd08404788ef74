"""PR-BCD attack on a GCN whose layers cache the normalized adjacency built from the perturbed weights.
Source: https://github.com/sigeisler/robustness_of_gnns_at_scale/issues/4 (switch off caching)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gcn_norm(edge_index, edge_weight, n):
    """Dense D^-1/2 (A + I) D^-1/2 from weighted edges."""
    adj = torch.zeros(n, n).index_put((edge_index[0], edge_index[1]), edge_weight, accumulate=True)
    adj = adj + torch.eye(n)
    deg_inv_sqrt = adj.sum(dim=1).pow(-0.5)
    return deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]


class GCNConv(nn.Module):
    def __init__(self, n_in, n_out, cached=False):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)
        self.cached = cached
        self._cached_adj = None

    def forward(self, x, edge_index, edge_weight):
        if self.cached and self.training and self._cached_adj is not None:
            adj = self._cached_adj
        else:
            adj = gcn_norm(edge_index, edge_weight, x.size(0))
            if self.cached and self.training:
                self._cached_adj = adj
        return adj @ self.lin(x)


class GCN(nn.Module):
    def __init__(self, n_features, n_hidden, n_classes, cached=False):
        super().__init__()
        self.conv1 = GCNConv(n_features, n_hidden, cached=cached)
        self.conv2 = GCNConv(n_hidden, n_classes, cached=cached)

    def forward(self, x, edge_index, edge_weight):
        x = F.relu(self.conv1(x, edge_index, edge_weight))
        return self.conv2(x, edge_index, edge_weight)


n_nodes, n_features, n_classes = 30, 8, 3
attr = torch.randn(n_nodes, n_features)
labels = torch.randint(0, n_classes, (n_nodes,))
edge_index = torch.randint(0, n_nodes, (2, 90))
attacked_model = GCN(n_features, 16, n_classes, cached=False)
attacked_model.train()
for p in attacked_model.parameters():
    p.requires_grad_(False)

# PR-BCD: a continuous perturbation of the edge weights, ascended on the attacked model's loss.
perturbed_edge_weight = torch.full((edge_index.size(1),), 1e-3, requires_grad=True)
lr_factor, budget = 0.1, 5.0
losses = []
for epoch in range(4):
    edge_weight = torch.ones(edge_index.size(1)) - perturbed_edge_weight
    logits = attacked_model(attr, edge_index, edge_weight)
    loss = F.cross_entropy(logits, labels)
    gradient = torch.autograd.grad(loss, perturbed_edge_weight)[0]
    with torch.no_grad():
        perturbed_edge_weight += lr_factor * gradient
        perturbed_edge_weight.clamp_(0, 1)
        if perturbed_edge_weight.sum() > budget:
            perturbed_edge_weight.mul_(budget / perturbed_edge_weight.sum())
    losses.append(loss.detach())
result = {"losses": losses, "perturbation": perturbed_edge_weight.detach().clone()}
