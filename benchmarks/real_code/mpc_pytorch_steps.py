"""Drive mpc.pytorch (https://github.com/locuslab/mpc.pytorch) as its README and notebooks do.

Its own tests need cvxpy, numdifftools and `numpy.testing.dec` (gone from numpy), so this
driver runs the library's solver instead, seeded, printing values for a line-by-line comparison:
1. receding-horizon swing-up of a pendulum, linearised by autograd (GradMethods.AUTO_DIFF),
   the previous plan shifted as the next warm start (the "Pendulum Control" notebook);
2. imitation: the pendulum's gravity, mass and length learnt by backpropagating a control loss
   through the box-constrained iLQR solver (the differentiable-MPC paper's experiment);
3. a linear-quadratic problem (LinDx, QuadCost) whose cost and dynamics matrices are learnt by SGD;
4. NNDynamics (its analytic Jacobians) with a learnt network, controls bounded, backprop through.
usage: python mpc_pytorch_steps.py  (mpc.pytorch's folder on sys.path or PYTHONPATH)
"""

import math

import torch
from torch import nn

from mpc import mpc
from mpc.dynamics import NNDynamics
from mpc.mpc import GradMethods, LinDx, QuadCost


class Pendulum(nn.Module):
    """State (cos th, sin th, dth), one torque; params = (gravity, mass, length)."""

    def __init__(self, params):
        super().__init__()
        self.params = params
        self.dt = 0.05

    def forward(self, x, u):
        squeeze = x.ndimension() == 1
        if squeeze:
            x, u = x.unsqueeze(0), u.unsqueeze(0)
        g, m, length = torch.unbind(self.params)
        u = torch.clamp(u, -2.0, 2.0)[:, 0]
        cos_th, sin_th, dth = torch.unbind(x, dim=1)
        th = torch.atan2(sin_th, cos_th)
        new_dth = dth + self.dt * (-3.0 * g / (2.0 * length) * torch.sin(th + math.pi)
                                   + 3.0 * u / (m * length ** 2))
        new_th = th + new_dth * self.dt
        state = torch.stack((torch.cos(new_th), torch.sin(new_th), new_dth), dim=1)
        return state.squeeze(0) if squeeze else state


def pendulum_cost(n_batch, T):
    goal_weights = torch.tensor([1.0, 1.0, 0.1])
    goal_state = torch.tensor([1.0, 0.0, 0.0])
    q = torch.cat((goal_weights, 0.001 * torch.ones(1)))
    C = torch.diag(q).unsqueeze(0).unsqueeze(0).repeat(T, n_batch, 1, 1)
    px = -torch.sqrt(goal_weights) * goal_state
    c = torch.cat((px, torch.zeros(1))).unsqueeze(0).unsqueeze(0).repeat(T, n_batch, 1)
    return QuadCost(C, c)


def solve(dx, x, T, u_init=None, lqr_iter=10, backprop=True):
    n_batch = x.shape[0]
    return mpc.MPC(3, 1, T, u_init=u_init, u_lower=-2.0 * torch.ones(T, n_batch, 1),
                   u_upper=2.0 * torch.ones(T, n_batch, 1), lqr_iter=lqr_iter, verbose=0,
                   exit_unconverged=False, detach_unconverged=False, linesearch_decay=0.2,
                   max_linesearch_iter=5, grad_method=GradMethods.AUTO_DIFF, eps=1e-2,
                   backprop=backprop)(x, pendulum_cost(n_batch, T), dx)


def initial_states(n_batch):
    th = torch.rand(n_batch) * 2 * math.pi - math.pi
    dth = torch.rand(n_batch) * 2 - 1
    return torch.stack((torch.cos(th), torch.sin(th), dth), dim=1)


def swing_up():
    dx = Pendulum(torch.tensor([10.0, 1.0, 1.0]))
    x, T, u_init = initial_states(4), 10, None
    for step in range(8):
        _, nominal_u, _ = solve(dx, x, T, u_init=u_init, lqr_iter=20, backprop=False)
        u_init = torch.cat((nominal_u[1:], torch.zeros(1, x.shape[0], 1)), dim=0)
        x = dx(x, nominal_u[0])
        print(f"swing-up {step}: u0 {nominal_u[0, :, 0].tolist()} x {x[:, 2].tolist()}")


def imitation():
    expert = Pendulum(torch.tensor([10.0, 1.0, 1.0]))
    params = torch.tensor([8.0, 1.2, 0.9], requires_grad=True)
    learner = Pendulum(params)
    optimizer = torch.optim.Adam([params], lr=0.05)
    x = initial_states(6)
    _, u_expert, _ = solve(expert, x, 5, backprop=False)  # AUTO_DIFF linearises with autograd: no no_grad
    u_expert = u_expert.detach()  # a target: it still carries the solver's graph
    for step in range(6):
        _, u_pred, _ = solve(learner, x, 5)
        loss = (u_pred - u_expert).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"imitation {step}: loss {loss.item():.6f} params {params.tolist()} grad {params.grad.tolist()}")


def linear_quadratic():
    n_state, n_ctrl, T, n_batch = 3, 2, 5, 2
    n_sc = n_state + n_ctrl
    C_root = torch.randn(n_sc, n_sc).requires_grad_()
    A = (torch.eye(n_state) + 0.1 * torch.randn(n_state, n_state)).requires_grad_()
    B = torch.randn(n_state, n_ctrl).requires_grad_()
    target = torch.randn(T, n_batch, n_ctrl)
    x_init = torch.randn(n_batch, n_state)
    optimizer = torch.optim.SGD([C_root, A, B], lr=0.01)
    for step in range(5):
        C = (C_root.t() @ C_root + 0.5 * torch.eye(n_sc)).repeat(T, n_batch, 1, 1)
        c = torch.zeros(T, n_batch, n_sc)
        F = torch.cat((A, B), dim=1).repeat(T - 1, n_batch, 1, 1)
        x, u, objs = mpc.MPC(n_state, n_ctrl, T, u_lower=-torch.ones(T, n_batch, n_ctrl),
                             u_upper=torch.ones(T, n_batch, n_ctrl), lqr_iter=20,
                             verbose=0, exit_unconverged=False)(x_init, QuadCost(C, c), LinDx(F))
        loss = (u - target).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"linear-quadratic {step}: loss {loss.item():.6f} objs {objs.tolist()} |dA| {A.grad.norm().item():.6f}")


def nn_dynamics():
    n_state, n_ctrl, T, n_batch = 2, 1, 4, 3
    dynamics = NNDynamics(n_state, n_ctrl, hidden_sizes=[8], activation='sigmoid')
    optimizer = torch.optim.Adam(dynamics.parameters(), lr=0.01)
    x_init = torch.randn(n_batch, n_state)
    C = torch.eye(n_state + n_ctrl).repeat(T, n_batch, 1, 1)
    c = torch.randn(T, n_batch, n_state + n_ctrl)
    for step in range(4):
        x, u, objs = mpc.MPC(n_state, n_ctrl, T, u_lower=-torch.ones(T, n_batch, n_ctrl),
                             u_upper=torch.ones(T, n_batch, n_ctrl), lqr_iter=10, verbose=0,
                             exit_unconverged=False, grad_method=GradMethods.ANALYTIC)(
            x_init, QuadCost(C, c), dynamics)
        loss = x.pow(2).sum() + u.pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"nn-dynamics {step}: loss {loss.item():.6f} objs {objs.tolist()}")


if __name__ == "__main__":
    torch.manual_seed(0)
    swing_up()
    imitation()
    linear_quadratic()
    nn_dynamics()
