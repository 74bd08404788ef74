"""Momentum ResNets trained without storing activations (`use_backprop=False`): a custom
autograd.Function runs the momentum iterations `v = gamma * v + (1 - gamma) * f(x); x = x + v`
under `no_grad`, saves only the final state, and its backward reverses the iterations,
recomputing each `f` under `enable_grad` and calling `torch.autograd.grad` for the input and the
parameters. With `init_speed=True` the velocity's initial value comes from `init_function`, and
the backward also asks `torch.autograd.grad(f_eval, params, ...)` for the init function's
parameters. The reporter used `init_function=nn.Tanh()`, which has none: since PyTorch 1.10 the
call fails ("`inputs` argument to `grad()` cannot be empty"), while a `nn.Linear` init works.
The fix: only ask for the init function's gradients when it has parameters.
Source: https://github.com/michaelsdr/momentumnet/issues/21
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def find_parameters(module):
    return list(module.parameters())


class MomentumTransformMemory(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, v, gamma, functions, init_function, *params):
        ctx.functions = functions
        ctx.gamma = gamma
        ctx.init_function = init_function
        with torch.no_grad():
            for function in functions:
                v = gamma * v + (1 - gamma) * function(x)
                x = x + v
        ctx.save_for_backward(x, v)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        functions, gamma = ctx.functions, ctx.gamma
        x, v = ctx.saved_tensors
        grad_x = grad_output
        grad_v = torch.zeros_like(grad_x)
        grad_params = []
        with torch.enable_grad():
            for function in functions[::-1]:
                x = (x - v).detach().requires_grad_(True)
                f_eval = function(x)
                grad_combi = grad_x + grad_v
                params = tuple(find_parameters(function))
                vjps = torch.autograd.grad(f_eval, (x,) + params, grad_combi)
                v = (v - (1 - gamma) * f_eval.detach()) / gamma
                grad_params.append([(1 - gamma) * vjp for vjp in vjps[1:]])
                grad_x = grad_x + (1 - gamma) * vjps[0]
                grad_v = gamma * grad_combi
            if ctx.init_function is not None:
                x = x.detach().requires_grad_(True)
                f_eval = ctx.init_function(x)
                params = tuple(find_parameters(ctx.init_function))
                vjps = torch.autograd.grad(f_eval, params, torch.zeros_like(grad_x))
                grad_params.append([vjp for vjp in vjps])
        flat_params = []
        for param_grads in grad_params[::-1]:
            flat_params += param_grads
        return (grad_x, grad_v, None, None, None, *flat_params)


class MomentumNet(nn.Module):
    def __init__(self, functions, gamma, init_speed=False, init_function=None):
        super().__init__()
        self.functions = nn.ModuleList(functions)
        self.gamma = gamma
        self.init_speed = init_speed
        self.init_function = init_function

    def forward(self, x):
        params = []
        if not self.init_speed:
            init_function = None
            v = torch.zeros_like(x)
        else:
            v = self.init_function(x)
            params += find_parameters(self.init_function)
            init_function = self.init_function
        for function in self.functions:
            params += find_parameters(function)
        return MomentumTransformMemory.apply(x, v, self.gamma, list(self.functions), init_function, *params)


hidden, d = 8, 3
functions = [nn.Sequential(nn.Linear(d, hidden), nn.Tanh(), nn.Linear(hidden, d)) for _ in range(4)]
net = MomentumNet(functions, gamma=0.9, init_speed=True, init_function=nn.Tanh())
head = nn.Linear(d, 1)
optimizer = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.05)

losses = []
for step in range(10):
    x = torch.randn(16, d)
    y = (x ** 2).sum(1, keepdim=True)
    loss = ((head(net(x)) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]
          + [p.detach().clone() for p in head.parameters()]}
