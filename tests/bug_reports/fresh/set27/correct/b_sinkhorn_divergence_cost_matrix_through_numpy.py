"""Training a small generative model with an entropic optimal-transport loss: a generator maps
Gaussian noise to 2-D points, and the loss is the empirical Sinkhorn divergence between the
generated batch and a batch of target samples (a ring of Gaussian blobs), computed by the OT
library's `empirical_sinkhorn_divergence(X_s, X_t, reg)` on torch tensors. Inside the library the
cost matrix of `empirical_sinkhorn2` is computed on NumPy copies of the samples
(`dist(nx.to_numpy(X_s), nx.to_numpy(X_t))`, then `nx.from_numpy(M)`), so the loss no longer
depends on the generated points: it has no `grad_fn`, and `loss.backward()` raises "element 0 of
tensors does not require grad and does not have a grad_fn".
Source: https://github.com/PythonOT/POT/issues/393 ("empirical_sinkhorn_divergence doesn't have
a grad_fn"; the maintainer: "The backend for the sinkhorn divergence is not properly done so it
goes to numpy and back losing gradient information"; fixed by
https://github.com/PythonOT/POT/pull/394, which computes `M = dist(X_s, X_t)` with the backend
and returns `nx.maximum(0, sinkhorn_div)` instead of Python's `max`)
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


# --- the OT library's pieces (a torch backend, distances, Sinkhorn) --------------------------
class TorchBackend:
    def to_numpy(self, a):
        return a.cpu().detach().numpy()

    def from_numpy(self, a, type_as=None):
        a = torch.from_numpy(a)
        return a if type_as is None else a.to(dtype=type_as.dtype, device=type_as.device)

    def maximum(self, a, b):
        if isinstance(a, (int, float)):
            a = torch.tensor(float(a), dtype=b.dtype, device=b.device)
        return torch.maximum(a, b)


nx = TorchBackend()


def dist(x1, x2, metric="sqeuclidean"):
    """Squared Euclidean cost matrix, for NumPy arrays or torch tensors."""
    return ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(-1)


def unif(n, type_as):
    return torch.full((n,), 1.0 / n, dtype=type_as.dtype, device=type_as.device)


def sinkhorn2(a, b, M, reg, num_iter=100):
    """Entropic OT cost <P, M> of the Sinkhorn plan (Sinkhorn-Knopp iterations)."""
    K = torch.exp(-M / reg)
    u = torch.ones_like(a)
    for _ in range(num_iter):
        v = b / (K.T @ u)
        u = a / (K @ v)
    plan = u[:, None] * K * v[None, :]
    return (plan * M).sum()


def empirical_sinkhorn2(X_s, X_t, reg, a=None, b=None, metric="sqeuclidean"):
    if a is None:
        a = unif(X_s.shape[0], type_as=X_s)
    if b is None:
        b = unif(X_t.shape[0], type_as=X_t)
    M = dist(X_s, X_t, metric=metric)
    return sinkhorn2(a, b, M, reg)


def empirical_sinkhorn_divergence(X_s, X_t, reg, a=None, b=None, metric="sqeuclidean"):
    sinkhorn_loss_ab = empirical_sinkhorn2(X_s, X_t, reg, a, b, metric=metric)
    sinkhorn_loss_a = empirical_sinkhorn2(X_s, X_s, reg, a, a, metric=metric)
    sinkhorn_loss_b = empirical_sinkhorn2(X_t, X_t, reg, b, b, metric=metric)
    sinkhorn_div = sinkhorn_loss_ab - 0.5 * (sinkhorn_loss_a + sinkhorn_loss_b)
    return nx.maximum(0, sinkhorn_div)


# --- the user's generative model --------------------------------------------------------------
def sample_target(n):
    centers = torch.tensor([[math.cos(2 * math.pi * k / 6), math.sin(2 * math.pi * k / 6)] for k in range(6)])
    idx = torch.randint(0, 6, (n,))
    return 2.0 * centers[idx] + 0.1 * torch.randn(n, 2)


class Generator(nn.Module):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.latent_dim = latent_dim
        self.net = nn.Sequential(nn.Linear(latent_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))

    def forward(self, n):
        return self.net(torch.randn(n, self.latent_dim))


generator = Generator()
optimizer = torch.optim.Adam(generator.parameters(), lr=5e-3)
losses = []
for it in range(40):
    fake = generator(64)
    real = sample_target(64)
    loss = empirical_sinkhorn_divergence(fake, real, 1.0)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in generator.parameters()]}
