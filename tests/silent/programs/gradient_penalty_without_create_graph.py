"""WGAN-GP: the gradient penalty's gradients are taken without create_graph=True, so the penalty
is a constant and adds nothing to the critic's gradients."""
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)
for _ in range(2):
    real, fake = torch.randn(6, 3), torch.randn(6, 3)
    eps = torch.rand(6, 1)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_()
    slopes = torch.autograd.grad(critic(mixed).sum(), mixed)[0]  # PRIMARY
    penalty = ((slopes.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10.0 * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in critic.parameters()]
