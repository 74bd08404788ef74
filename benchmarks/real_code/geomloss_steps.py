"""GeomLoss (jeanfeydy/geomloss) losses under gradient flows and training, on CPU, for docs/real-code.md:
its tests check the new solvers' values only (no backward pass), so this driver runs what its gallery
runs, on the tensorized backend (pykeops is not installed). Its Sinkhorn loops run with autograd
switched off (`torch.autograd.set_grad_enabled(False)`), then one last step with autograd on whose
right-hand sides are detached, so the gradient is the envelope theorem's; its kernel losses
differentiate through `DoubleGrad`, a custom Function whose backward doubles the gradient.
Runs: gradient flows of point clouds (positions and weights) under the Sinkhorn (debiased or not,
p=1 and 2, balanced and unbalanced with `reach`), energy, Gaussian and Laplacian losses,
the dual potentials (`potentials=True`), a second-order product through the energy distance,
and a small generator trained with Adam against a target cloud (not run: the Hausdorff loss,
which fails on the tensorized backend of this snapshot with a KeyError, and the Sinkhorn
divergence between images, which needs pykeops). Seeded; prints losses and checksums."""
import torch
from geomloss import SamplesLoss

torch.manual_seed(0)
source = torch.rand(60, 2) * 0.5
target = torch.rand(70, 2) * 0.5 + 0.4
target_weights = torch.softmax(torch.randn(70), dim=0)

losses = {
    'sinkhorn-p2': dict(loss='sinkhorn', p=2, blur=0.05),
    'sinkhorn-p1-biased': dict(loss='sinkhorn', p=1, blur=0.05, debias=False),
    'sinkhorn-unbalanced': dict(loss='sinkhorn', p=2, blur=0.05, reach=0.3),
    'energy': dict(loss='energy'),
    'gaussian': dict(loss='gaussian', blur=0.2),
    'laplacian': dict(loss='laplacian', blur=0.2),
}
for name, options in losses.items():
    loss_function = SamplesLoss(backend='tensorized', **options)
    points = source.clone().requires_grad_(True)
    log_weights = torch.zeros(60, requires_grad=True)
    for step in range(10):
        weights = torch.softmax(log_weights, dim=0)
        loss = loss_function(weights, points, target_weights, target)
        point_gradient, weight_gradient = torch.autograd.grad(loss, [points, log_weights])
        with torch.no_grad():
            points -= 60 * 0.2 * point_gradient  # the gallery's flow: a step proportional to the number of points
            log_weights -= 0.5 * weight_gradient
    print(name, f'{loss.item():.8f}', f'{points.detach().double().sum().item():.8f}', f'{log_weights.detach().double().abs().sum().item():.8f}')

# the dual potentials, differentiated with respect to the positions
potentials = SamplesLoss('sinkhorn', p=2, blur=0.05, potentials=True, backend='tensorized')
points = source.clone().requires_grad_(True)
f, g = potentials(points, target)
(f.sum() + g.pow(2).sum()).backward()
print('potentials', f'{f.sum().item():.8f}', f'{g.sum().item():.8f}', f'{points.grad.double().abs().sum().item():.8f}')

# a Hessian-vector product through the energy distance (DoubleGrad's backward, differentiated again)
energy = SamplesLoss('energy', backend='tensorized')
points = source.clone().requires_grad_(True)
gradient, = torch.autograd.grad(energy(points, target), points, create_graph=True)
direction = torch.ones_like(points)
hessian_vector, = torch.autograd.grad((gradient * direction).sum(), points)
print('energy hvp', f'{hessian_vector.double().sum().item():.8f}', f'{hessian_vector.double().abs().sum().item():.8f}')

# a generator trained against the target cloud
torch.manual_seed(1)
generator = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-2)
sinkhorn = SamplesLoss('sinkhorn', p=2, blur=0.05, scaling=0.7, backend='tensorized')
noise = torch.randn(64, 3)
for step in range(15):
    loss = sinkhorn(generator(noise), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 4:
        print('generator', step, f'{loss.item():.8f}')
print('generator checksum', f'{sum(p.double().sum().item() for p in generator.parameters()):.8f}')
