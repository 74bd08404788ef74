"""alphafold2 (lucidrains), end-to-end sequence-to-coordinates training: the predicted distogram
is reduced to a central distance matrix and turned into 3-D coordinates by `mds_torch`, a
differentiable multidimensional scaling (SMACOF / Guttman transform), and the loss is taken on the
coordinates. Inside each MDS iteration the distance matrix of the current coordinates comes from
`torch.cdist`, and zeros (the diagonal) are patched in place before the division:
`dist_mat[dist_mat == 0] += 1e-7`. From the second iteration on, the coordinates carry a graph,
so cdist saved its output for backward, and `coords.sum().backward()` fails with "one of the
variables needed for gradient computation has been modified by an inplace operation" (the
maintainer checked in "a broken test for backwarding through MDS"). The merged fix (PR #37,
"solve inplace") clones the cdist output before patching it.
Source: https://github.com/lucidrains/alphafold2/pull/37
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

DISTANCE_THRESHOLDS = torch.linspace(2, 20, steps=16)


def expand_dims_to(t, length):
    if not length:
        return t
    return t.reshape(*((1,) * length), *t.shape)


def center_distogram_torch(distogram, bins=DISTANCE_THRESHOLDS):
    """Mean of each distance distribution; weight 1 where the distance is inside the last bin."""
    n_bins = bins - 0.5 * (bins[2] - bins[1])
    central = (distogram * n_bins).sum(dim=-1)
    weights = (central <= bins[-2].item()).float()
    diag_idxs = np.arange(distogram.shape[-2])
    central = central * (1 - torch.eye(distogram.shape[-2]))
    return central, weights


def mds_torch(pre_dist_mat, weights=None, iters=10, tol=1e-5, verbose=0):
    """Gets distance matrix. Outputs 3d coordinates, (batch, 3, N)."""
    if weights is None:
        weights = torch.ones_like(pre_dist_mat)
    pre_dist_mat = expand_dims_to(pre_dist_mat, length=(3 - len(pre_dist_mat.shape)))
    batch, N, _ = pre_dist_mat.shape
    diag_idxs = np.arange(N)
    his = []
    best_stress = float("Inf") * torch.ones(batch)
    best_3d_coords = 2 * torch.rand(batch, N, 3) - 1
    for i in range(iters):
        # compute distance matrix of coords and stress
        dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2).clone()
        stress = (weights * (dist_mat - pre_dist_mat) ** 2).sum(dim=(-1, -2)) * 0.5
        # perturb - update X using the Guttman transform - sklearn-like
        dist_mat[dist_mat == 0] = 1e-7
        ratio = weights * (pre_dist_mat / dist_mat)
        B = -ratio
        B[:, diag_idxs, diag_idxs] += ratio.sum(dim=-1)
        # update
        coords = (1. / N * torch.matmul(B, best_3d_coords))
        dis = torch.norm(coords, dim=(-1, -2))
        if (best_stress - stress / dis).mean() <= tol:
            break
        best_3d_coords = coords
        best_stress = (stress / dis)
        his.append(best_stress)
    return torch.transpose(best_3d_coords, -1, -2), torch.cat(his)


class DistogramNet(nn.Module):
    """Sequence embedding -> pairwise features -> distogram over the distance buckets."""

    def __init__(self, num_tokens=21, dim=16, buckets=16):
        super().__init__()
        self.embed = nn.Embedding(num_tokens, dim)
        self.pair = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU(), nn.Linear(dim, buckets))

    def forward(self, seq):
        x = self.embed(seq)
        n = x.shape[1]
        pair = torch.cat([x.unsqueeze(2).expand(-1, -1, n, -1), x.unsqueeze(1).expand(-1, n, -1, -1)], dim=-1)
        logits = self.pair(pair)
        logits = (logits + logits.transpose(1, 2)) / 2
        return logits.softmax(dim=-1)


def random_chain(batch, n):
    steps = torch.randn(batch, n, 3)
    steps = 3.8 * steps / steps.norm(dim=-1, keepdim=True)
    return steps.cumsum(dim=1)


model = DistogramNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(5):
    seq = torch.randint(0, 21, (2, 12))
    true_coords = random_chain(2, 12)
    distogram = model(seq)
    central, weights = center_distogram_torch(distogram)
    coords_3d, stress_history = mds_torch(central, weights=weights, iters=6)
    pred_dist = torch.cdist(coords_3d.transpose(-1, -2), coords_3d.transpose(-1, -2))
    loss = ((pred_dist - torch.cdist(true_coords, true_coords)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
