"""The ProteinMPNN-style encoder with the node message computed by its node head (`self.out_v(h)`).
Source: https://github.com/pyg-team/pytorch_geometric/pull/10781."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

RESIDUES, EDGES, NODE_DIM, EDGE_DIM, AMINO_ACIDS = 12, 40, 16, 16, 5


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.out_v = nn.Sequential(nn.Linear(2 * NODE_DIM + EDGE_DIM, EDGE_DIM), nn.GELU(), nn.Linear(EDGE_DIM, EDGE_DIM))
        self.out_e = nn.Sequential(nn.Linear(2 * NODE_DIM + EDGE_DIM, EDGE_DIM), nn.GELU(), nn.Linear(EDGE_DIM, EDGE_DIM))
        self.node_norm = nn.LayerNorm(NODE_DIM)
        self.edge_norm = nn.LayerNorm(EDGE_DIM)

    def message(self, x_i, x_j, edge_attr):
        h = torch.cat([x_i, x_j, edge_attr], dim=-1)
        return self.out_v(h)

    def forward(self, x, edge_index, edge_attr):
        source, target = edge_index
        messages = self.message(x[target], x[source], edge_attr)
        aggregated = torch.zeros_like(x).index_add(0, target, messages)
        x = self.node_norm(x + aggregated / 4.0)
        edge_update = self.out_e(torch.cat([x[target], x[source], edge_attr], dim=-1))
        return x, self.edge_norm(edge_attr + edge_update)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(), EncoderLayer()])
        self.readout = nn.Linear(NODE_DIM, AMINO_ACIDS)

    def forward(self, x, edge_index, edge_attr):
        for layer in self.layers:
            x, edge_attr = layer(x, edge_index, edge_attr)
        return self.readout(x)


model = Encoder()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
x = torch.randn(RESIDUES, NODE_DIM)
edge_index = torch.randint(0, RESIDUES, (2, EDGES))
edge_attr = torch.randn(EDGES, EDGE_DIM)
labels = torch.randint(0, AMINO_ACIDS, (RESIDUES,))
losses = []
for step in range(6):
    loss = F.cross_entropy(model(x, edge_index, edge_attr), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
