"""HGCN link prediction with the Euclidean manifold: normalize() renormalised the ReLU output in place.
Source: https://github.com/HazyResearch/hgcn/issues/50 (renormalise out of place: `renorm` instead of `renorm_`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Euclidean:
    name = "Euclidean"

    def normalize(self, p):
        dim = p.size(-1)
        return p.view(-1, dim).renorm(2, 0, 1.0).view_as(p)

    def sqdist(self, p1, p2, c):
        return (p1 - p2).pow(2).sum(dim=-1)


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, act):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.act = act

    def forward(self, x, adj):
        support = torch.spmm(adj, self.linear(x))
        return self.act(support)


class FermiDiracDecoder(nn.Module):
    def __init__(self, r=2.0, t=1.0):
        super().__init__()
        self.r = r
        self.t = t

    def forward(self, dist):
        return 1.0 / (torch.exp((dist - self.r) / self.t) + 1.0)


class LPModel(nn.Module):
    def __init__(self, n_features, dim):
        super().__init__()
        self.manifold = Euclidean()
        self.manifold_name = "Euclidean"
        self.c = None
        self.layers = nn.ModuleList([GraphConvolution(n_features, dim, F.relu), GraphConvolution(dim, dim, F.relu)])
        self.dc = FermiDiracDecoder()

    def encode(self, x, adj):
        h = x
        for layer in self.layers:
            h = layer(h, adj)
        return h

    def decode(self, h, idx):
        if self.manifold_name == "Euclidean":
            h = self.manifold.normalize(h)
        emb_in = h[idx[:, 0], :]
        emb_out = h[idx[:, 1], :]
        sqdist = self.manifold.sqdist(emb_in, emb_out, self.c)
        return self.dc(sqdist)

    def compute_metrics(self, embeddings, edges, edges_false):
        pos_scores = self.decode(embeddings, edges)
        neg_scores = self.decode(embeddings, edges_false)
        loss = F.binary_cross_entropy(pos_scores, torch.ones_like(pos_scores))
        loss = loss + F.binary_cross_entropy(neg_scores, torch.zeros_like(neg_scores))
        return loss


n_nodes, n_features = 40, 12
features = torch.randn(n_nodes, n_features)
edges = torch.randint(0, n_nodes, (80, 2))
dense = torch.zeros(n_nodes, n_nodes)
dense[edges[:, 0], edges[:, 1]] = 1.0
dense = dense + dense.t() + torch.eye(n_nodes)
dense = (dense > 0).float()
adj = (dense / dense.sum(1, keepdim=True)).to_sparse()
edges_false = torch.randint(0, n_nodes, (80, 2))

model = LPModel(n_features, 16)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in range(5):
    optimizer.zero_grad()
    embeddings = model.encode(features, adj)
    loss = model.compute_metrics(embeddings, edges, edges_false)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
