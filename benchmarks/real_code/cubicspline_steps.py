"""torchcubicspline (patrick-kidger/torchcubicspline) under training, on CPU, for docs/real-code.md: its
own tests check values only (no backward pass) and one of them draws its inputs without a seed, so
this driver runs the library's splines with gradients. The coefficients come from a tridiagonal
solve written with slice assignments into fresh tensors (`system_diagonal[:-1] = ...`) and, with
missing values, a per-channel loop that fills NaNs with index writes (`x[0] = ...`). Runs: knot values
fitted to a curve through the spline's values and first derivatives (Adam), the same with NaN entries
(the missing-values path), derivatives with respect to the evaluation times by `autograd.grad` with
`create_graph=True` checked against the library's `derivative` and then differentiated again into
the knots, and a batched spline feeding a linear layer (SGD). Seeded; prints losses and checksums."""
import torch
from torchcubicspline import natural_cubic_spline_coeffs, NaturalCubicSpline

torch.manual_seed(0)
knot_times = torch.linspace(0, 1, 7)
dense_times = torch.linspace(0, 1, 41)
target = torch.stack([torch.sin(6 * dense_times), torch.cos(4 * dense_times)], dim=-1)
target_slope = torch.stack([6 * torch.cos(6 * dense_times), -4 * torch.sin(4 * dense_times)], dim=-1)

for name, missing in (('fit', None), ('fit-missing-values', torch.tensor([[False, False]] + [[False, True]] * 2 + [[False, False]] * 4))):
    torch.manual_seed(1)
    knots = torch.nn.Parameter(torch.randn(7, 2) * 0.1)
    optimizer = torch.optim.Adam([knots], lr=5e-2)
    for step in range(30):
        values = knots if missing is None else torch.where(missing, torch.full_like(knots, float('nan')), knots)
        spline = NaturalCubicSpline(natural_cubic_spline_coeffs(knot_times, values))
        loss = (spline.evaluate(dense_times) - target).pow(2).mean() + 1e-2 * (spline.derivative(dense_times) - target_slope).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 5 == 4:
            print(name, step, f'{loss.item():.8f}')
    print(name, 'checksum', f'{knots.detach().double().sum().item():.8f}')

# derivatives with respect to the evaluation times, then a second backward into the knots
torch.manual_seed(2)
knots = torch.randn(7, 2, dtype=torch.float64, requires_grad=True)
times = torch.rand(9, dtype=torch.float64, requires_grad=True)
spline = NaturalCubicSpline(natural_cubic_spline_coeffs(knot_times.double(), knots))
values = spline.evaluate(times)
slopes = torch.stack([torch.autograd.grad(values[:, channel].sum(), times, create_graph=True)[0] for channel in range(2)], dim=-1)
print('slopes agree with derivative()', torch.allclose(slopes, spline.derivative(times)))
curvature_penalty = slopes.pow(2).sum()
knot_gradient, = torch.autograd.grad(curvature_penalty, knots)
weights = torch.arange(1, 15, dtype=torch.float64).reshape(7, 2)
print('second-order gradient', f'{(weights * knot_gradient).sum().item():.8f}', f'{knot_gradient.abs().sum().item():.8f}')

# a batch of splines read at fixed times by a linear layer
torch.manual_seed(3)
paths = torch.randn(16, 7, 3).cumsum(dim=1)
labels = (paths[:, -1, 0] > 0).float()
spline = NaturalCubicSpline(natural_cubic_spline_coeffs(knot_times, paths))
features = torch.cat([spline.evaluate(dense_times[::8]), spline.derivative(dense_times[::8])], dim=-1).flatten(1)
layer = torch.nn.Linear(features.shape[1], 1)
optimizer = torch.optim.SGD(layer.parameters(), lr=1e-2, momentum=0.9)
for step in range(20):
    loss = torch.nn.functional.binary_cross_entropy_with_logits(layer(features).squeeze(-1), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print('classifier', f'{loss.item():.8f}', f'{sum(p.double().sum().item() for p in layer.parameters()):.8f}')
