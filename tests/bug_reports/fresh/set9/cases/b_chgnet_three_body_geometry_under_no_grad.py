"""Interatomic potential with two- and three-body terms (CHGNet in MatGL), trained on energies
and forces, where the forces are `-dE/dpos` by autograd. The line graph of bond pairs used by the
three-body term is built inside `torch.no_grad()`, and that call also returns the bond vectors
and lengths the three-body features are computed from, so they are cut off from the positions:
the forces silently miss the three-body contribution and the force loss trains the model on
wrong forces. Nothing is raised.
Source: https://github.com/materialyzeai/matgl/issues/834 ("CHGNet forces and stresses may be
inconsistent with energy derivatives due to detached three-body geometry"; the change compared
there removes only the `torch.no_grad()` around `create_directed_line_graph`).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def create_line_graph(bond_vec, bond_dist, three_body_cutoff):
    """Pairs of bonds sharing an atom, both shorter than the cutoff: their vectors and lengths."""
    keep = bond_dist < three_body_cutoff
    vec, dist = bond_vec[keep], bond_dist[keep]
    first, second = torch.triu_indices(len(dist), len(dist), offset=1)
    return vec[first], vec[second], dist[first], dist[second]


class TinyPotential(nn.Module):
    def __init__(self, three_body_cutoff=2.5):
        super().__init__()
        self.three_body_cutoff = three_body_cutoff
        self.two_body = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
        self.three_body = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, pos):
        src, dst = torch.triu_indices(len(pos), len(pos), offset=1)
        bond_vec = pos[dst] - pos[src]
        bond_dist = bond_vec.norm(dim=1)
        energy = self.two_body(bond_dist.unsqueeze(1)).sum()
        with torch.no_grad():
            vec_a, vec_b, dist_a, dist_b = create_line_graph(bond_vec, bond_dist, self.three_body_cutoff)
        cos_angle = (vec_a * vec_b).sum(dim=1) / (dist_a * dist_b)
        features = torch.stack([cos_angle, dist_a, dist_b], dim=1)
        return energy + self.three_body(features).sum()


model = TinyPotential()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
structures = [torch.randn(4, 3) for _ in range(3)]
reference_energy = [torch.tensor(-1.0), torch.tensor(-0.5), torch.tensor(-1.5)]
reference_forces = [0.1 * torch.randn(4, 3) for _ in range(3)]
losses, all_forces = [], []
for pos, e_ref, f_ref in zip(structures, reference_energy, reference_forces):
    pos = pos.clone().requires_grad_(True)
    energy = model(pos)
    forces = -torch.autograd.grad(energy, pos, create_graph=True)[0]
    loss = (energy - e_ref) ** 2 + ((forces - f_ref) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    all_forces.append(forces.detach())
result = {"losses": losses, "forces": all_forces, "params": [p.detach().clone() for p in model.parameters()]}
