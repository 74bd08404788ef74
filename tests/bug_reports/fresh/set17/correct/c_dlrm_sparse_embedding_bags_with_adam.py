"""The embedding bags give dense gradients (`sparse=False`), which Adam takes, as the
maintainer advises for optimizers other than SGD.
Source: https://github.com/facebookresearch/dlrm/issues/15."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DENSE, TABLE_SIZES, DIM = 4, (50, 30, 20), 8


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(DENSE, 16), nn.ReLU(), nn.Linear(16, DIM), nn.ReLU())
        self.tables = nn.ModuleList(nn.EmbeddingBag(n, DIM, mode="sum", sparse=False) for n in TABLE_SIZES)
        pairs = (len(TABLE_SIZES) + 1) * len(TABLE_SIZES) // 2
        self.top = nn.Sequential(nn.Linear(DIM + pairs, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense, indices, offsets):
        features = [self.bottom(dense)]
        features += [table(idx, off) for table, idx, off in zip(self.tables, indices, offsets)]
        stacked = torch.stack(features, dim=1)
        dots = stacked @ stacked.transpose(1, 2)
        i, j = torch.tril_indices(len(features), len(features), offset=-1)
        return self.top(torch.cat([features[0], dots[:, i, j]], dim=1)).squeeze(1)


def make_batch(batch):
    dense = torch.randn(batch, DENSE)
    indices = [torch.randint(0, n, (2 * batch,)) for n in TABLE_SIZES]
    offsets = [torch.arange(0, 2 * batch, 2) for _ in TABLE_SIZES]
    return dense, indices, offsets, torch.randint(0, 2, (batch,)).float()


model = DLRM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
batches = [make_batch(16) for _ in range(3)]
losses = []
for dense, indices, offsets, clicks in batches:
    loss = F.binary_cross_entropy_with_logits(model(dense, indices, offsets), clicks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
