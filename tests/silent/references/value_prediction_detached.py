import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
value_net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
states, next_states, rewards = torch.randn(4, 6, 3), torch.randn(4, 6, 3), torch.randn(4, 6, 1)
weights = [p.detach().clone() for p in value_net.parameters()]


def value(x, w1, b1, w2, b2):
    return torch.tanh(x @ w1.T + b1) @ w2.T + b2


for step in range(4):  # SGD by hand: the prediction trains, the bootstrapped target is a constant
    leaves = [p.clone().requires_grad_() for p in weights]
    target = rewards[step] + 0.9 * value(next_states[step], *weights)
    loss = F.mse_loss(value(states[step], *leaves), target)
    weights = [p - 0.1 * g for p, g in zip(weights, torch.autograd.grad(loss, leaves))]
result = weights
