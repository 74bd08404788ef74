import torch
import torch.nn as nn

torch.manual_seed(0)
first = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
x, y = torch.randn(10, 4), torch.randn(10, 1)
net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
params = [p.detach().clone() for p in net.parameters()]
velocity = [torch.zeros_like(p) for p in params]
for step in range(3):  # SGD with momentum 0.9 on the second network, by hand, from a fresh state
    leaves = [p.clone().requires_grad_() for p in params]
    hidden = torch.tanh(x @ leaves[0].T + leaves[1])
    loss = (hidden @ leaves[2].T + leaves[3] - y).pow(2).mean()
    grads = torch.autograd.grad(loss, leaves)
    velocity = [g if step == 0 else 0.9 * v + g for v, g in zip(velocity, grads)]
    params = [p - 0.1 * v for p, v in zip(params, velocity)]
result = params
