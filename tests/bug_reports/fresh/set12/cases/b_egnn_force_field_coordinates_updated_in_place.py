"""EGNN (E(n)-equivariant graph network), reused in another project as a force field: the energy
is read from the node features and the forces are `-dE/dpositions`, so the positions given to the
network require grad. `E_GCL.coord_model` updates the coordinates with `coord += agg`; in the first
layer `coord` is the positions tensor itself, a leaf that requires grad, and the in-place add
raises ("a leaf Variable that requires grad is being used in an in-place operation"). The
maintainers changed the line to `coord = coord + agg`, which "fixed it".
Source: https://github.com/vgsatorras/egnn/issues/3
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def unsorted_segment_mean(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result = data.new_full(result_shape, 0)
    count = data.new_full(result_shape, 0)
    result.scatter_add_(0, segment_ids, data)
    count.scatter_add_(0, segment_ids, torch.ones_like(data))
    return result / count.clamp(min=1)


class E_GCL(nn.Module):
    def __init__(self, nf, hidden_nf):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(2 * nf + 1, hidden_nf), nn.SiLU(), nn.Linear(hidden_nf, hidden_nf), nn.SiLU())
        self.node_mlp = nn.Sequential(nn.Linear(hidden_nf + nf, hidden_nf), nn.SiLU(), nn.Linear(hidden_nf, nf))
        layer = nn.Linear(hidden_nf, 1, bias=False)
        torch.nn.init.xavier_uniform_(layer.weight, gain=0.001)
        self.coord_mlp = nn.Sequential(nn.Linear(hidden_nf, hidden_nf), nn.SiLU(), layer)

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = coord[row] - coord[col]
        radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
        return radial, coord_diff

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, col = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        agg = unsorted_segment_mean(trans, row, num_segments=coord.size(0))
        coord += agg
        return coord

    def forward(self, h, edge_index, coord):
        row, col = edge_index
        radial, coord_diff = self.coord2radial(edge_index, coord)
        edge_feat = self.edge_mlp(torch.cat([h[row], h[col], radial], dim=1))
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        agg = unsorted_segment_mean(edge_feat, row, num_segments=h.size(0))
        h = h + self.node_mlp(torch.cat([h, agg], dim=1))
        return h, coord


class EGNNForceField(nn.Module):
    def __init__(self, in_node_nf, hidden_nf, n_layers=2):
        super().__init__()
        self.embedding_in = nn.Linear(in_node_nf, hidden_nf)
        self.layers = nn.ModuleList([E_GCL(hidden_nf, hidden_nf) for _ in range(n_layers)])
        self.energy_head = nn.Linear(hidden_nf, 1)

    def forward(self, h, positions, edges):
        h = self.embedding_in(h)
        x = positions
        for layer in self.layers:
            h, x = layer(h, edges, x)
        return self.energy_head(h).sum()


n_atoms = 6
rows, cols = zip(*[(i, j) for i in range(n_atoms) for j in range(n_atoms) if i != j])
edges = [torch.tensor(rows), torch.tensor(cols)]
atom_types = torch.nn.functional.one_hot(torch.randint(0, 3, (n_atoms,)), 3).float()
conformations = [torch.randn(n_atoms, 3) for _ in range(4)]
reference_energy = [c.pow(2).sum() * 0.1 for c in conformations]
reference_forces = [-0.2 * c for c in conformations]

model = EGNNForceField(3, 16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(4):
    positions = conformations[step].clone().requires_grad_(True)
    optimizer.zero_grad()
    energy = model(atom_types, positions, edges)
    forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
    loss = (energy - reference_energy[step]).pow(2) + (forces - reference_forces[step]).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
