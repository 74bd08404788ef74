"""McTorch (mctorch/mctorch) manifold optimisation on CPU, for docs/real-code.md: the project has no
tests, and its examples are notebooks (MNIST) and two scripts, so this driver runs what they run.
McTorch's `Parameter` is a subclass of `nn.Parameter` that registers a tensor hook on itself: the
hook turns each Euclidean gradient into a Riemannian one (`egrad2rgrad`) and keeps it on the
parameter, and the optimizers then move the parameter through `p.data.add_(retr(...) - p.data)`.
Runs the project's PCA on the Stiefel manifold (`examples/pca.py`, shortened) with rSGD, rAdagrad,
rASA and ConjugateGradient, the doubly-stochastic matching of `examples/ds.py` (small), a
hyperbolic parameter, and an `rLinear`/`rConv2d` network with Stiefel weights
trained on random images beside ordinary parameters. Seeded; prints losses and checksums."""
import torch
import mctorch.nn as mnn
import mctorch.optim as moptim
from mctorch.nn.manifolds import doublystochastic


def checksum(tensors):
    return f'{sum(t.detach().double().sum().item() for t in tensors):.8f}'


torch.manual_seed(0)
points = torch.diag(torch.tensor([3.0, 2.0, 1.0])).matmul(torch.randn(3, 200))
points -= points.mean(axis=0)


def reconstruction_error(w):
    return torch.norm((points - w @ (w.transpose(1, 0) @ points)) ** 2)


optimizers = {
    'rsgd': lambda params: moptim.rSGD(params, lr=1e-2),
    'radagrad': lambda params: moptim.rAdagrad(params, lr=1e-1),
    'rasa': lambda params: moptim.rASA(params, lr=1e-1),
    'cg-hestenes-stiefel': lambda params: moptim.ConjugateGradient(params, lr=1e-2),
    'cg-fletcher-reeves': lambda params: moptim.ConjugateGradient(params, lr=1e-2, beta_type='FletcherReeves'),
}
for name, make_optimizer in optimizers.items():
    torch.manual_seed(1)
    w = mnn.Parameter(manifold=mnn.Stiefel(3, 2))
    optimizer = make_optimizer([w])
    for step in range(40):
        loss = reconstruction_error(w)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 9:
            print('pca', name, step, f'{loss.item():.6f}')
    print('pca', name, 'checksum', checksum([w]), 'orthonormal', f'{(w.T @ w - torch.eye(2)).abs().max().item():.2e}')

# examples/ds.py, small: a doubly-stochastic matrix fitted to a target made by Sinkhorn-Knopp
torch.manual_seed(2)
k, n, m = 2, 30, 40
target = torch.empty((k, n, m))
row_sums = torch.empty((k, n))
column_sums = torch.empty((k, m))
for i in range(k):
    p0, q0 = torch.rand(n), torch.rand(m)
    row_sums[i], column_sums[i] = p0 / p0.sum(), q0 / q0.sum()
    target[i] = doublystochastic.SKnopp(torch.rand(n, m)[None, :], row_sums[i], column_sums[i], n + m)
x = mnn.Parameter(manifold=mnn.DoublyStochastic(n, m, k=k, p=row_sums, q=column_sums))
optimizer = moptim.ConjugateGradient(params=[x], lr=1e-2)
for step in range(15):
    loss = 0.5 * torch.linalg.norm(x - target) ** 2
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print('ds', step, f'{loss.item():.8f}')

# a point on the hyperbolic manifold (Lorentz model) pulled toward a target point
# (the positive-definite manifold calls `torch.solve`, removed from torch since 1.9: not run)
torch.manual_seed(3)
target_point = mnn.Hyperbolic(4).rand()
point = mnn.Parameter(manifold=mnn.Hyperbolic(4))
optimizer = moptim.rSGD([point], lr=1e-2)
for step in range(20):
    loss = (point - target_point).pow(2).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print('hyperbolic', f'{loss.item():.8f}', checksum([point]))

# a network with Stiefel weights beside ordinary parameters (the notebooks' MLP and LeNet, on random data)
torch.manual_seed(4)
images = torch.randn(32, 1, 8, 8)
labels = torch.randint(0, 3, (32,))
network = torch.nn.Sequential(
    mnn.rConv2d(1, 4, 3, weight_manifold=mnn.Stiefel), torch.nn.ReLU(), torch.nn.Flatten(),
    mnn.rLinear(4 * 6 * 6, 10, weight_manifold=mnn.Stiefel), torch.nn.ReLU(), torch.nn.Linear(10, 3))
for name, optimizer in (('rsgd', moptim.rSGD(network.parameters(), lr=5e-2)),
                        ('radagrad', moptim.rAdagrad(network.parameters(), lr=5e-2))):
    for step in range(8):
        loss = torch.nn.functional.cross_entropy(network(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('network', name, step, f'{loss.item():.8f}')
    print('network', name, 'checksum', checksum(network.parameters()))
