"""Traffic forecasting on a dynamic graph with an EvolveGCN-O style layer: the GCN weight is evolved
by a GRU from one snapshot to the next and kept on the module (`self.weight`), so the second
epoch starts from the last snapshot's weight of the first epoch, whose graph the first
`backward()` freed.
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/297 ("Trying to
backward through the graph a second time" in the evolvegcnh/evolvegcno examples; the evolved weight
has to start again from the initial weight for every pass over the sequence).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
N_NODES, FEATS = 8, 4


class EvolveGCNO(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(channels, channels) * 0.3)
        self.recurrent = nn.GRUCell(channels, channels)
        self.weight = None

    def forward(self, x, adj):
        if self.weight is None:
            self.weight = self.initial_weight.clone()
        self.weight = self.recurrent(self.weight, self.weight)
        return torch.relu(adj @ x @ self.weight)


class RecurrentGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.evolve = EvolveGCNO(FEATS)
        self.linear = nn.Linear(FEATS, 1)

    def forward(self, x, adj):
        return self.linear(self.evolve(x, adj)).squeeze(-1)


snapshots = []
for t in range(4):
    adj = (torch.rand(N_NODES, N_NODES) > 0.5).float() + torch.eye(N_NODES)
    snapshots.append((torch.randn(N_NODES, FEATS), adj / adj.sum(1, keepdim=True), torch.randn(N_NODES)))
model = RecurrentGCN()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in range(3):
    model.evolve.weight = None
    loss = 0
    for i, (x, adj, y) in enumerate(snapshots):
        loss = loss + torch.mean((model(x, adj) - y) ** 2)
    loss = loss / (i + 1)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
