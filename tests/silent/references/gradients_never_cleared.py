import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
params = [p.detach().clone() for p in classifier.parameters()]
batches = [(torch.randn(16, 6), torch.randint(0, 3, (16,))) for _ in range(4)]
for features, labels in batches:  # SGD by hand: each step applies only its own batch's gradients
    leaves = [p.clone().requires_grad_() for p in params]
    w1, b1, w2, b2 = leaves
    logits = F.relu(features @ w1.T + b1) @ w2.T + b2
    grads = torch.autograd.grad(F.cross_entropy(logits, labels), leaves)
    params = [p - 0.1 * g for p, g in zip(params, grads)]
result = params
