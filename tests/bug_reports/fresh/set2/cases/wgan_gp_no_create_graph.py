"""WGAN-GP: the gradient penalty's `autograd.grad` is called without `create_graph=True`, so the
penalty is a constant and adds nothing to the critic's gradients (no error).
Source: https://github.com/caogang/wgan-gp/issues/4 (the penalty needs create_graph=True to reach
the critic's weights).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
real, fake = torch.randn(5, 3), torch.randn(5, 3)
lam = 10.0

eps = torch.rand(5, 1)
interpolates = (eps * real + (1 - eps) * fake).requires_grad_()
scores = critic(interpolates)
gradients = torch.autograd.grad(scores, interpolates, grad_outputs=torch.ones_like(scores))[0]
penalty = lam * ((gradients.norm(2, dim=1) - 1) ** 2).mean()
d_cost = critic(fake).mean() - critic(real).mean() + penalty
d_cost.backward()
result = {"d_cost": d_cost.detach(), "grads": [p.grad for p in critic.parameters()]}
