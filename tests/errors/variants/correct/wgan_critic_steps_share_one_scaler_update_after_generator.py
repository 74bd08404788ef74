# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_without_update)
# set: 31
# trigger: a WGAN trains its critic n_critic = 3 times per generator step, both optimizers through
#   one GradScaler; scaler.update() is called once, after the generator's step
# source: none found; the pattern as users write it (the n_critic loop of WGAN training under AMP)
# results: losses, generator, critic
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
generator_optimizer = torch.optim.RMSprop(generator.parameters(), lr=5e-3)
critic_optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
scaler = torch.amp.GradScaler("cpu")
real = torch.randn(16, 4) + 2.0
n_critic = 3
losses = []
for _ in range(2):
    for _ in range(n_critic):
        critic_optimizer.zero_grad()
        fake = generator(torch.randn(16, 2)).detach()
        critic_loss = critic(fake).mean() - critic(real).mean()
        scaler.scale(critic_loss).backward()
        scaler.step(critic_optimizer)  # PRIMARY
        scaler.update()
    generator_optimizer.zero_grad()
    generator_loss = -critic(generator(torch.randn(16, 2))).mean()
    scaler.scale(generator_loss).backward()
    scaler.step(generator_optimizer)
    scaler.update()
    losses.append((critic_loss.detach(), generator_loss.detach()))
