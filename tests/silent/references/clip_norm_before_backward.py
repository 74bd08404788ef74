import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 2))
params = [p.detach().clone() for p in model.parameters()]
inputs, targets = torch.randn(32, 5), torch.randn(32, 2) * 10
velocity = [torch.zeros_like(p) for p in params]
for step in range(3):  # SGD with momentum by hand, on gradients whose total norm is clipped to 0.5
    leaves = [p.clone().requires_grad_() for p in params]
    w1, b1, w2, b2 = leaves
    prediction = torch.tanh(inputs @ w1.T + b1) @ w2.T + b2
    grads = torch.autograd.grad(nn.functional.mse_loss(prediction, targets), leaves)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    grads = [g * torch.clamp(0.5 / (total + 1e-6), max=1.0) for g in grads]
    velocity = [g if step == 0 else 0.9 * v + g for v, g in zip(velocity, grads)]
    params = [p - 0.2 * v for p, v in zip(params, velocity)]
result = params
