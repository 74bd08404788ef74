import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
params = [p.detach().clone() for p in critic.parameters()]


def score(x, w1, b1, w2, b2):
    return torch.tanh(x @ w1.T + b1) @ w2.T + b2


for _ in range(2):  # SGD by hand, the penalty differentiated through the gradients
    real, fake = torch.randn(6, 3), torch.randn(6, 3)
    eps = torch.rand(6, 1)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_()
    leaves = [p.clone().requires_grad_() for p in params]
    slopes = torch.autograd.grad(score(mixed, *leaves).sum(), mixed, create_graph=True)[0]
    penalty = ((slopes.norm(2, dim=1) - 1) ** 2).mean()
    loss = score(fake, *leaves).mean() - score(real, *leaves).mean() + 10.0 * penalty
    grads = torch.autograd.grad(loss, leaves)
    params = [p - 0.05 * g for p, g in zip(params, grads)]
result = params
