"""A heterogeneous graph transformer's relative temporal encoding: the
embedding table is filled with a fixed sinusoid and meant to stay fixed, so
`__init__` writes `self.emb.requires_grad = False`.  A module has no such
switch: the assignment only adds an attribute, the table's `weight` still
requires grad, and the optimizer built over the model's parameters trains the
"fixed" encoding.  Silent; `bug_shows()` shows the sinusoid table changing
after one step.  `self.emb.requires_grad_(False)` (or `self.emb.weight.
requires_grad = False`) freezes it.
Source: https://github.com/THUDM/cogdl (cogdl/layers/gpt_gnn_module.py, RelTemporalEncoding)"""
import math

import torch
import torch.nn as nn


class RelTemporalEncoding(nn.Module):
    def __init__(self, n_hid, max_len=24, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        position = torch.arange(0.0, max_len).unsqueeze(1)
        div_term = 1 / (10000 ** (torch.arange(0.0, n_hid * 2, 2.0)) / n_hid / 2)
        self.emb = nn.Embedding(max_len, n_hid * 2)
        self.emb.weight.data[:, 0::2] = torch.sin(position * div_term) / math.sqrt(n_hid)
        self.emb.weight.data[:, 1::2] = torch.cos(position * div_term) / math.sqrt(n_hid)
        self.emb.requires_grad = False  # expect: ADL016
        self.lin = nn.Linear(n_hid * 2, n_hid)

    def forward(self, x, t):
        return x + self.lin(self.drop(self.emb(t)))


class TemporalLayer(nn.Module):
    def __init__(self, in_dim, out_dim, use_RTE=True):
        super().__init__()
        self.use_RTE = use_RTE
        self.emb = RelTemporalEncoding(in_dim) if use_RTE else None
        self.linear = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_time):
        if self.use_RTE:
            x = self.emb(x, edge_time)
        return self.linear(torch.relu(x))


def bug_shows():
    torch.manual_seed(0)
    layer = TemporalLayer(4, 2)
    optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-2)
    table = layer.emb.emb.weight.detach().clone()
    x, edge_time = torch.randn(6, 4), torch.randint(0, 24, (6,))
    optimizer.zero_grad()
    layer(x, edge_time).pow(2).mean().backward()
    optimizer.step()
    return not torch.equal(table, layer.emb.emb.weight.detach())
