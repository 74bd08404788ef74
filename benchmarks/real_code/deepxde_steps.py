"""Physics-informed networks trained for a few hundred steps with DeepXDE's PyTorch backend
(DDE_BACKEND=pytorch): a 1-D Poisson problem (Hessian of the network by autograd.grad with
create_graph, Adam then L-BFGS), an inverse problem whose unknown ODE coefficient is a trainable
dde.Variable fitted with the network from observed points, and a diffusion equation in space and
time with an initial condition, a Neumann boundary and residual points resampled by a callback.
Prints DeepXDE's loss tables and the fitted values."""
import numpy as np
import deepxde as dde
import torch

dde.config.set_random_seed(0)
dde.optimizers.config.set_LBFGS_options(maxiter=60)

# 1. Poisson: -u'' = pi^2 sin(pi x) on [-1, 1], u = sin(pi x) on the boundary
def poisson(x, y):
    return -dde.grad.hessian(y, x) - np.pi ** 2 * torch.sin(np.pi * x)

geom = dde.geometry.Interval(-1, 1)
exact = lambda x: np.sin(np.pi * x)
data = dde.data.PDE(geom, poisson, dde.icbc.DirichletBC(geom, exact, lambda x, on: on), 16, 2,
                    solution=exact, num_test=50)
model = dde.Model(data, dde.nn.FNN([1] + [20] * 3 + [1], "tanh", "Glorot uniform"))
model.compile("adam", lr=1e-3, metrics=["l2 relative error"])
model.train(iterations=300, display_every=100)
model.compile("L-BFGS", metrics=["l2 relative error"])
model.train(display_every=30)
print("poisson residual", float(np.abs(model.predict(geom.uniform_points(20), operator=poisson)).mean().round(6)))

# 2. Inverse: y' = C y with C unknown (true 1.5), y(0) = 1, observed at five points
C = dde.Variable(0.5)
def ode(t, y):
    return dde.grad.jacobian(y, t) - C * y

timeline = dde.geometry.TimeDomain(0, 1)
observed_t = np.linspace(0, 1, 5)[:, None]
observed = dde.icbc.PointSetBC(observed_t, np.exp(1.5 * observed_t))
initial = dde.icbc.IC(timeline, lambda t: 1.0, lambda t, on: on and dde.utils.isclose(t[0], 0))
data = dde.data.PDE(timeline, ode, [initial, observed], 32, 2, anchors=observed_t)
model = dde.Model(data, dde.nn.FNN([1, 16, 16, 1], "tanh", "Glorot uniform"))
model.compile("adam", lr=1e-2, external_trainable_variables=C)
model.train(iterations=300, display_every=100,
            callbacks=[dde.callbacks.VariableValue(C, period=100, precision=6)])
print("fitted C", round(C.item(), 6))

# 3. Diffusion u_t = u_xx - e^{-t}(sin(pi x) - pi^2 sin(pi x)), Neumann at x = 1, resampled points
def diffusion(x, y):
    dy_t = dde.grad.jacobian(y, x, i=0, j=1)
    dy_xx = dde.grad.hessian(y, x, i=0, j=0)
    return dy_t - dy_xx + torch.exp(-x[:, 1:]) * (torch.sin(np.pi * x[:, 0:1]) - np.pi ** 2 * torch.sin(np.pi * x[:, 0:1]))

solution = lambda x: np.sin(np.pi * x[:, 0:1]) * np.exp(-x[:, 1:])
space_time = dde.geometry.GeometryXTime(dde.geometry.Interval(-1, 1), dde.geometry.TimeDomain(0, 1))
left = dde.icbc.DirichletBC(space_time, solution, lambda x, on: on and dde.utils.isclose(x[0], -1))
right = dde.icbc.NeumannBC(space_time, lambda x: -np.pi * np.exp(-x[:, 1:]), lambda x, on: on and dde.utils.isclose(x[0], 1))
start = dde.icbc.IC(space_time, solution, lambda x, on: on)
data = dde.data.TimePDE(space_time, diffusion, [left, right, start], num_domain=40, num_boundary=10,
                        num_initial=10, solution=solution, num_test=100)
model = dde.Model(data, dde.nn.FNN([2] + [16] * 2 + [1], "tanh", "Glorot normal"))
model.compile("adam", lr=1e-3, metrics=["l2 relative error"], loss_weights=[1, 1, 1, 10])
model.train(iterations=300, display_every=100, callbacks=[dde.callbacks.PDEPointResampler(period=50)])
print("diffusion checksum", round(sum(p.double().sum().item() for p in model.net.parameters()), 6))
