"""Differentiating the solution of an ODE with respect to time: the decay equation dy/dt = -k*y is
solved with an `odeint` that works on NumPy arrays (scipy's; a NumPy stand-in with the same call is
written here, scipy not being installed), then the solution and the times are turned into tensors
that require grad, and `torch.autograd.grad(y[-1, 0], t[-1, 0], ...)` asks for dy/dt at the last
time: "One of the differentiated Tensors appears to not have been used in the graph". The answer:
the solver ran on arrays, so no graph relates the two tensors; compute the solution with torch
operations from `t` (here the same fourth-order Runge-Kutta steps, written with torch) and
differentiate through them.
Source: https://github.com/pytorch/pytorch/issues/125532
expect: raises"""
import numpy as np
import torch


def odeint(func, y0, t):
    # The same fixed-step fourth-order Runge-Kutta, on tensors: the solution keeps its graph to t.
    ys = [torch.atleast_1d(torch.as_tensor(y0, dtype=torch.float64))]
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        y = ys[-1]
        k1 = func(y, t[i])
        k2 = func(y + h / 2 * k1, t[i] + h / 2)
        k3 = func(y + h / 2 * k2, t[i] + h / 2)
        k4 = func(y + h * k3, t[i] + h)
        ys.append(y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return torch.stack(ys)


def model(y, t):
    k = 0.3
    dydt = -k * y
    return dydt


y0 = 5

t = torch.tensor(np.linspace(0, 20, 10), requires_grad=True)

y = odeint(model, y0, t)
dy = (torch.autograd.grad(y[-1, 0], t)[0][-1],)

print(dy)

result = {"y": y.detach(), "dy": dy[0].detach()}
