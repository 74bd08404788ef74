"""facebookresearch/flow_matching: maximum-likelihood training of a flow. The user trains the
velocity model by minimising the negative log-likelihood that `ODESolver.compute_likelihood(...,
enable_grad=True)` returns (the instantaneous change of variables: integrate the velocity and its
divergence backwards from t=1 to t=0). The solver's `dynamics_func` ends with
`return ut.detach(), div.detach()` whatever `enable_grad` says, and the Hutchinson divergence is
taken without `create_graph`, so the log-likelihood carries no path back to the velocity model.
Nothing raises: `xt.requires_grad_()` inside the dynamics turns the data batch `x_1` itself into a
leaf that requires grad, so the loss still has a graph (through the identity part of each Euler
step), `backward()` runs, and every parameter of the velocity model keeps `.grad = None`; Adam
skips them and the model never changes (issue #59: "the gradient of the log probability is None
even when calling compute_likelihood with enable_grad=True"). The merged fix (PR #91) detaches
only when `enable_grad` is False and builds the divergence's graph when it is True.
Source: https://github.com/facebookresearch/flow_matching/pull/91
expect: silent"""
import math
from typing import Callable

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def gradient(output: Tensor, x: Tensor, grad_outputs=None, create_graph: bool = False) -> Tensor:
    if grad_outputs is None:
        grad_outputs = torch.ones_like(output).detach()
    return torch.autograd.grad(output, x, grad_outputs, create_graph=create_graph)[0]


def odeint(func, y0, t, step_size):
    """Fixed-step Euler over a tuple state, as torchdiffeq's `method="euler"` does."""
    ys = [y0]
    state = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        n = max(1, int(math.ceil(abs(float(t1 - t0)) / step_size)))
        dt = (t1 - t0) / n
        for k in range(n):
            tk = t0 + k * dt
            derivs = func(tk, state)
            state = tuple(s + dt * d for s, d in zip(state, derivs))
        ys.append(state)
    return tuple(torch.stack([y[i] for y in ys]) for i in range(len(y0)))


class ODESolver:
    def __init__(self, velocity_model: nn.Module):
        self.velocity_model = velocity_model

    def compute_likelihood(self, x_1: Tensor, log_p0: Callable[[Tensor], Tensor], step_size: float,
                           time_grid: Tensor = torch.tensor([1.0, 0.0]), enable_grad: bool = False):
        z = (torch.randn_like(x_1) < 0) * 2.0 - 1.0

        def ode_func(x, t):
            return self.velocity_model(x=x, t=t)

        def dynamics_func(t, states):
            xt = states[0]
            with torch.set_grad_enabled(True):
                xt.requires_grad_()
                ut = ode_func(xt, t)
                # Hutchinson divergence estimator E[z^T D_x(ut) z]
                ut_dot_z = torch.einsum("ij,ij->i", ut.flatten(start_dim=1), z.flatten(start_dim=1))
                grad_ut_dot_z = gradient(ut_dot_z, xt)
                div = torch.einsum("ij,ij->i", grad_ut_dot_z.flatten(start_dim=1), z.flatten(start_dim=1))

            return ut.detach(), div.detach()

        y_init = (x_1, torch.zeros(x_1.shape[0]))
        with torch.set_grad_enabled(enable_grad):
            sol, log_det = odeint(dynamics_func, y_init, time_grid, step_size)
        x_source = sol[-1]
        return x_source, log_p0(x_source) + log_det[-1]


class VelocityMLP(nn.Module):
    def __init__(self, dim=2, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, dim))

    def forward(self, x, t):
        t = torch.as_tensor(t, dtype=x.dtype).expand(x.shape[0], 1)
        return self.net(torch.cat([x, t], dim=-1))


def sample_target(n):
    """Two Gaussian blobs."""
    centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0]])
    return centers[torch.randint(0, 2, (n,))] + 0.3 * torch.randn(n, 2)


def log_p0(x):
    return -0.5 * (x ** 2).sum(-1) - math.log(2 * math.pi)


velocity_model = VelocityMLP()
solver = ODESolver(velocity_model)
optimizer = torch.optim.Adam(velocity_model.parameters(), lr=1e-2)
nlls = []
for step in range(15):
    x_1 = sample_target(64)
    _, log_p = solver.compute_likelihood(x_1=x_1, log_p0=log_p0, step_size=0.25, enable_grad=True)
    loss = -log_p.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    nlls.append(loss.detach())

result = {"nll": torch.stack(nlls), "params": [p.detach().clone() for p in velocity_model.parameters()]}
