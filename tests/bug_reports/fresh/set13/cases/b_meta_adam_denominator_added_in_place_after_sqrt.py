"""Meta-learning with a differentiable Adam (TorchOpt's `MetaAdam`): few-shot sine regression where
the inner loop adapts the network with two Adam steps taken through the graph
(`torch.autograd.grad(..., create_graph=True)`), and the outer loop backpropagates the query loss
through those steps into the meta-parameters. The Adam transform computes its update as
`m.div(v.add(eps_root).sqrt_().add_(eps))`: `sqrt_()` keeps its result for backward and `add_(eps)`
then writes into that result, so the outer backward() fails ("one of the variables needed for
gradient computation has been modified by an inplace operation: ... output 0 of SqrtBackward0").
Source: https://github.com/metaopt/torchopt/commit/f39849353e459172d90673868bb7d7d78bc3eb68
("fix(transform): fix inplace sqrt_ with add_": `sqrt_().add_(eps)` became `sqrt_().add(eps)` in
`_scale_by_adam`, `_scale_by_rms` and `_scale_by_stddev`).
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def scale_by_adam(grads, state, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
    mu, nu, count = state
    mu = [b1 * m + (1 - b1) * g for m, g in zip(mu, grads)]
    nu = [b2 * v + (1 - b2) * g * g for v, g in zip(nu, grads)]
    count = count + 1
    mu_hat = [m / (1 - b1 ** count) for m in mu]
    nu_hat = [v / (1 - b2 ** count) for v in nu]
    updates = [m.div(v.add(eps_root).sqrt_().add_(eps)) for m, v in zip(mu_hat, nu_hat)]
    return updates, (mu, nu, count)


class MetaAdam:
    def __init__(self, params, lr):
        self.lr = lr
        self.state = ([torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params], 0)

    def step(self, loss, params):
        grads = torch.autograd.grad(loss, params, create_graph=True)
        updates, self.state = scale_by_adam(grads, self.state)
        return [p - self.lr * u for p, u in zip(params, updates)]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(1, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x, params=None):
        w1, b1, w2, b2 = params if params is not None else list(self.parameters())
        return F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)


def sample_task():
    amplitude, phase = torch.rand(()) * 4 + 1, torch.rand(()) * math.pi
    support, query = torch.rand(10, 1) * 10 - 5, torch.rand(10, 1) * 10 - 5
    return support, amplitude * torch.sin(support + phase), query, amplitude * torch.sin(query + phase)


net = Regressor()
meta_optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
query_losses = []
for outer_step in range(3):
    x_support, y_support, x_query, y_query = sample_task()
    params = list(net.parameters())
    inner_optimizer = MetaAdam(params, lr=0.05)
    for inner_step in range(2):
        params = inner_optimizer.step(F.mse_loss(net(x_support, params), y_support), params)
    query_loss = F.mse_loss(net(x_query, params), y_query)
    meta_optimizer.zero_grad()
    query_loss.backward()
    meta_optimizer.step()
    query_losses.append(query_loss.detach())

result = {"query_losses": torch.stack(query_losses), "meta_params": [p.detach().clone() for p in net.parameters()]}
