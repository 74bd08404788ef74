"""Colorization GAN: the generator's adversarial term scores `fake.detach()`, so its gradient
reaches only the critic (whose gradients are cleared before the critic's own step), and the
generator is trained by the L1 term alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 6))
critic = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_gen = torch.optim.SGD(generator.parameters(), lr=0.05)
opt_critic = torch.optim.SGD(critic.parameters(), lr=0.05)
gray = torch.randn(3, 10, 4)
color = torch.randn(3, 10, 6)
for step in range(3):
    fake = generator(gray[step])
    adversarial = F.softplus(-critic(fake.detach())).mean()  # PRIMARY
    reconstruction = F.l1_loss(fake, color[step])
    loss_gen = adversarial + 5.0 * reconstruction
    opt_gen.zero_grad()
    loss_gen.backward()
    opt_gen.step()
    loss_critic = F.softplus(-critic(color[step])).mean() + F.softplus(critic(fake.detach())).mean()
    opt_critic.zero_grad()
    loss_critic.backward()
    opt_critic.step()
result = [p.detach().clone() for p in [*generator.parameters(), *critic.parameters()]]
