import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(3)]
params = [p.detach().clone() for p in model.parameters()]
for features, targets in batches:  # SGD by hand on the real gradients, each capped at 0.05
    leaves = [p.clone().requires_grad_() for p in params]
    w1, b1, w2, b2 = leaves
    prediction = torch.tanh(features @ w1.T + b1) @ w2.T + b2
    grads = torch.autograd.grad(((prediction - targets) ** 2).mean(), leaves)
    params = [p - 0.2 * g.clamp(-0.05, 0.05) for p, g in zip(params, grads)]
result = params
