"""optiland (optical design and ray tracing), GridInterpolator / HeightProfile with the torch
backend: the slopes of a tabulated height map are computed with
`torch.autograd.grad(h, (x, y), ..., create_graph=False)`. The slopes bend the rays of a phase
surface, but without `create_graph` they carry no graph back to the height map, so a trainable
height map is optimised only through the paths that use its value, never through the ray
directions. Nothing fails; in the PR's test a defocus coefficient "did not optimize: 28.2837 ->
28.2837" with torch while NumPy's finite-difference path converged. The fix (merged PR 605)
computes the slopes with `create_graph=True, retain_graph=True`.
Source: https://github.com/optiland/optiland/pull/605
expect: silent"""
import torch

torch.manual_seed(0)


class GridInterpolator:
    """Bilinear interpolation of a height map sampled on a regular grid over [-1, 1]^2."""

    def __init__(self, n):
        self.n = n

    def interpolate(self, height_map, x, y):
        u = (x + 1) / 2 * (self.n - 1)
        v = (y + 1) / 2 * (self.n - 1)
        i0 = u.detach().floor().clamp(0, self.n - 2).long()
        j0 = v.detach().floor().clamp(0, self.n - 2).long()
        fu, fv = u - i0, v - j0
        h00 = height_map[j0, i0]
        h01 = height_map[j0, i0 + 1]
        h10 = height_map[j0 + 1, i0]
        h11 = height_map[j0 + 1, i0 + 1]
        return (1 - fv) * ((1 - fu) * h00 + fu * h01) + fv * ((1 - fu) * h10 + fu * h11)

    def gradient(self, height_map, x, y):
        x = x.detach().requires_grad_(True)
        y = y.detach().requires_grad_(True)
        h = self.interpolate(height_map, x, y)
        dhdx, dhdy = torch.autograd.grad(h, (x, y), grad_outputs=torch.ones_like(h), create_graph=True, retain_graph=True)
        return dhdx, dhdy


class HeightProfile:
    def __init__(self, height_map, n):
        self.height_map = height_map
        self.interp = GridInterpolator(n)

    def sag(self, x, y):
        return self.interp.interpolate(self.height_map, x, y)

    def _interpolate_gradient(self, x, y):
        return self.interp.gradient(self.height_map, x, y)


def trace(profile, x, y, distance=2.0, focus=0.6):
    # rays leave a converging lens, cross a thin phase plate and land on the image plane
    dx, dy = profile._interpolate_gradient(x, y)
    ux, uy = -x / focus + 0.5 * dx, -y / focus + 0.5 * dy
    z = profile.sag(x, y)
    return x + (distance - z) * ux, y + (distance - z) * uy


n = 9
grid = torch.linspace(-1, 1, n)
yy, xx = torch.meshgrid(grid, grid, indexing="ij")
r2 = xx ** 2 + yy ** 2
c = torch.tensor(0.05, requires_grad=True)
optimizer = torch.optim.Adam([c], lr=0.02)
rays_x = torch.rand(64) * 1.6 - 0.8
rays_y = torch.rand(64) * 1.6 - 0.8

losses = []
for step in range(20):
    height_map = c * (2 * r2 - 1)
    profile = HeightProfile(height_map, n)
    px, py = trace(profile, rays_x, rays_y)
    loss = (px ** 2 + py ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "c": c.detach().clone()}
