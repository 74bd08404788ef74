"""Fitting a force field with a virtual site (a massless off-atom charge, as in 4-site water
models) to reference forces. The virtual site's position is built from a local frame of its parent
atoms: the frame axes are normalised in place (`xy_plane /= norm`, `z_hat /= z_norm`), and the
forces are the negative gradient of the energy taken with create_graph=True, so that a force loss
can be backpropagated to the virtual-site charge. norm() keeps its input for backward, so the force
computation fails: "one of the variables needed for gradient computation has been modified by an
inplace operation".
Source: https://github.com/openforcefield/smee/pull/127 ("Fix force loss when v-sites are
present": a 'tensor modified in-place' error when backpropagating through a loss involving forces
computed for v-sites; fixed by building the frame axes out of place).
expect: raises"""
import torch

torch.manual_seed(0)

n_waters = 4
oxygen = torch.randn(n_waters, 3) * 2.0
h1 = oxygen + torch.tensor([0.96, 0.0, 0.0]) + 0.05 * torch.randn(n_waters, 3)
h2 = oxygen + torch.tensor([-0.24, 0.93, 0.0]) + 0.05 * torch.randn(n_waters, 3)
coords = torch.stack([oxygen, h1, h2], dim=1).reshape(-1, 3).requires_grad_(True)

charge_site = torch.nn.Parameter(torch.tensor(-1.04))
site_distance = torch.tensor(0.15)
reference_forces = torch.randn(n_waters * 3, 3)
weights = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])


def virtual_sites(coords):
    parents = coords.reshape(n_waters, 3, 3)
    weighted = torch.einsum("ij,njk->nik", weights, parents)
    origin = weighted[:, 0, :]
    xy_plane = weighted[:, 1:, :]
    xy_plane /= torch.norm(xy_plane, dim=-1).unsqueeze(-1)
    x_hat = xy_plane[:, 0, :]
    z_hat = torch.cross(x_hat, xy_plane[:, 1, :], dim=-1)
    z_hat /= torch.norm(z_hat, dim=-1).unsqueeze(-1)
    y_hat = torch.cross(z_hat, x_hat, dim=-1)
    bisector = x_hat + 0.7 * y_hat
    return origin + site_distance * bisector / torch.norm(bisector, dim=-1, keepdim=True)


def energy(coords):
    sites = virtual_sites(coords)
    h_charge = -charge_site / 2
    atoms = coords.reshape(n_waters, 3, 3)[:, 1:, :].reshape(-1, 3)
    molecule_of_h = torch.arange(n_waters).repeat_interleave(2)
    molecule_of_site = torch.arange(n_waters)
    r = (sites[:, None, :] - atoms[None, :, :]).norm(dim=-1)
    other = molecule_of_site[:, None] != molecule_of_h[None, :]
    coulomb = (charge_site * h_charge / r * other).sum()
    bonds = coords.reshape(n_waters, 3, 3)
    stretch = ((bonds[:, 1:, :] - bonds[:, :1, :]).norm(dim=-1) - 0.96).pow(2).sum()
    return coulomb + 100.0 * stretch


optimizer = torch.optim.SGD([charge_site], lr=1e-3)
losses = []
for step in range(3):
    optimizer.zero_grad()
    e = energy(coords)
    forces = -torch.autograd.grad(e, coords, create_graph=True)[0]
    loss = (forces - reference_forces).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "charge": charge_site.detach().clone()}
