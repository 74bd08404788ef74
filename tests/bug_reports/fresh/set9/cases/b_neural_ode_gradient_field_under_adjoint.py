"""Neural ODE whose vector field is the gradient of a learned potential, `dx/dt = d phi(x)/dx`,
computed with `torch.autograd.grad` inside the ODE function, and solved with an adjoint solver.
The adjoint solver (as torchdiffeq's `odeint_adjoint`) integrates the forward pass inside an
autograd Function, where gradient recording is off, so `phi(x)` has no graph there and the
ODE function raises "element 0 of tensors does not require grad and does not have a grad_fn"
(plain `odeint` works).
Source: https://github.com/rtqichen/torchdiffeq/issues/154 ("Differentiation within the ODEfunc
with Adjoint method"; the maintainer's answer: wrap it in `torch.enable_grad()` and take
`x = x.clone().requires_grad_(True)` there).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def euler(func, y0, t):
    ys = [y0]
    for t0, t1 in zip(t[:-1], t[1:]):
        ys.append(ys[-1] + (t1 - t0) * func(t0, ys[-1]))
    return torch.stack(ys)


class OdeintAdjointMethod(torch.autograd.Function):
    """Memory-saving solve: nothing is recorded forward; backward solves again with gradients."""

    @staticmethod
    def forward(ctx, func, y0, t, *params):
        ctx.func, ctx.t = func, t
        ctx.save_for_backward(y0)
        return euler(func, y0, t)

    @staticmethod
    def backward(ctx, grad_ys):
        (y0,) = ctx.saved_tensors
        params = [p for p in ctx.func.parameters() if p.requires_grad]
        with torch.enable_grad():
            y0 = y0.detach().requires_grad_(True)
            ys = euler(ctx.func, y0, ctx.t)
            grads = torch.autograd.grad(ys, [y0] + params, grad_ys, allow_unused=True)
        return (None, grads[0], None, *grads[1:])


def odeint_adjoint(func, y0, t):
    return OdeintAdjointMethod.apply(func, y0, t, *func.parameters())


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, t, x):
        y = self.net(x)
        dy = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]
        return dy


func = ODEFunc()
optimizer = torch.optim.Adam(func.parameters(), lr=1e-2)
t = torch.linspace(0.0, 1.0, 5)
batch_x0 = torch.randn(8, 2)
batch_target = batch_x0 + 0.5
losses = []
for itr in range(3):
    optimizer.zero_grad()
    pred = odeint_adjoint(func, batch_x0, t)
    loss = (pred[-1] - batch_target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in func.parameters()]}
