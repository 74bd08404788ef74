"""Neural ODE trained through an adaptive-step solver, after torch_ACA's adaptive grid solver.
Before each trial step the solver saves the ODE function's state_dict, and when it rejects a step
it puts it back with `func.load_state_dict(state)`, to undo the running statistics that the
trial step added to the function's BatchNorm. `load_state_dict` copies into every parameter in
place, also into the weights that the accepted steps' graph saved for backward, so
`loss.backward()` fails with "one of the variables needed for gradient computation has been
modified by an inplace operation ... is at version 2; expected version 1".
Source: https://github.com/juntang-zhuang/torch_ACA/issues/1 (the author: "a problem with using
load_state_dict within a function to be backwarded through ... A naive fix is to comment out all
the load_state_dict").
expect: raises"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ODEFunc(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.BatchNorm1d(16), nn.Tanh(), nn.Linear(16, dim))

    def forward(self, t, y):
        return self.net(y)


def odeint_adaptive(func, y0, t_end=1.0, h=0.5, rtol=0.05):
    t, y = 0.0, y0
    while t < t_end - 1e-9:
        h = min(h, t_end - t)
        state = copy.deepcopy(func.state_dict())
        k1 = func(t, y)
        y_euler = y + h * k1
        k2 = func(t + h, y_euler)
        y_heun = y + h / 2 * (k1 + k2)
        error = (y_heun - y_euler).abs().max().item()
        if error > rtol and h > 0.1:
            func.load_state_dict(state)
            h = h / 2
            continue
        t, y = t + h, y_heun
        h = h * 2
    return y


func = ODEFunc()
optimizer = torch.optim.Adam(func.parameters(), lr=1e-2)
y0 = torch.randn(16, 4)
target = torch.randn(16, 4)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(odeint_adaptive(func, y0), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in func.parameters()]}
