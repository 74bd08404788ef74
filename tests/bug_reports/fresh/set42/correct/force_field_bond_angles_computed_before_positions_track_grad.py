"""A line-graph network (ALIGNN's atomwise model) predicting a structure's energy and its forces
by autograd: the forces are -dE/dr over the bond vectors r, summed onto the atoms. The bond
lengths are computed in `forward` after `r.requires_grad_(True)`, but the cosines of the bond
angles (the three-body features of the line graph) are computed when the graph is built, from the
same `r` before it tracks gradients: they enter the energy as constants, and the forces miss
every angle term. Nothing fails; the forces are not the derivative of the energy, and a force loss
trains on them. The fix (the pull request): compute the angle cosines inside `forward`, after the
bond vectors require grad.
Source: https://github.com/usnistgov/alignn/pull/114
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def build_graph(positions, cutoff=1.6):
    # Bonds i -> j within the cutoff, and the line graph: pairs of bonds that share an atom.
    n = positions.shape[0]
    src, dst = [], []
    for i in range(n):
        for j in range(n):
            if i != j and (positions[i] - positions[j]).norm() < cutoff:
                src.append(i)
                dst.append(j)
    src, dst = torch.tensor(src), torch.tensor(dst)
    r = positions[dst] - positions[src]
    pairs = [(a, b) for a in range(len(src)) for b in range(len(src)) if a != b and dst[a] == src[b]]
    lg_src = torch.tensor([a for a, _ in pairs])
    lg_dst = torch.tensor([b for _, b in pairs])
    graph = {"src": src, "dst": dst, "r": r, "lg_src": lg_src, "lg_dst": lg_dst, "n_atoms": n}
    graph["h"] = compute_bond_cosines(r, lg_src, lg_dst)
    return graph


def compute_bond_cosines(r, lg_src, lg_dst):
    r1 = -r[lg_src]
    r2 = r[lg_dst]
    return (r1 * r2).sum(dim=1) / (r1.norm(dim=1) * r2.norm(dim=1))


class AtomWiseModel(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(1, hidden), nn.SiLU(), nn.Linear(hidden, 1))
        self.angle_mlp = nn.Sequential(nn.Linear(1, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, g):
        r = g["r"]
        r.requires_grad_(True)
        bondlength = torch.norm(r, dim=1)
        angle_cosines = compute_bond_cosines(r, g["lg_src"], g["lg_dst"])
        energy = self.edge_mlp(bondlength[:, None]).sum() + self.angle_mlp(angle_cosines[:, None]).sum()
        dE_dr = torch.autograd.grad(energy, r, create_graph=True)[0]
        forces = torch.zeros(g["n_atoms"], 3)
        forces = forces.index_add(0, g["src"], dE_dr).index_add(0, g["dst"], -dE_dr)
        return energy, forces


positions = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [1.9, 0.9, 0.2], [0.2, 1.1, 0.1],
                          [1.1, 1.2, 0.9]])
target_forces = torch.randn(5, 3) * 0.1
model = AtomWiseModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    graph = build_graph(positions)
    energy, forces = model(graph)
    loss = ((forces - target_forces) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

graph = build_graph(positions)
energy, forces = model(graph)
print(energy.item(), forces)

result = {"energy": energy.detach(), "forces": forces.detach(),
          "params": [p.detach().clone() for p in model.parameters()]}
