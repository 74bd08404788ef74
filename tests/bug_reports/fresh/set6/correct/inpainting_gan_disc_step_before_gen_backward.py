"""Image inpainting GAN: the discriminator is run on the real image, on the detached completion and
on the completion for the generator's adversarial loss, all before any backward; then the
discriminator's `backward()` and `step()` run, and the generator's loss, whose graph saved the
discriminator's weights before that step, fails.
Source: https://github.com/geekyutao/RN/pull/19 ("moved discriminator's backward position": an
"inplace operation error" because the forward of the discriminator was called twice before
backward; the PR runs the discriminator's update before the generator's pass through it).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1), nn.Tanh())
discriminator = nn.Sequential(nn.Conv2d(3, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                              nn.Conv2d(16, 1, 4, stride=2, padding=1))
g_opt = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
d_opt = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

losses = []
for step in range(3):
    real = torch.rand(4, 3, 16, 16) * 2 - 1
    mask = (torch.rand(4, 1, 16, 16) > 0.3).float()
    fake = generator(torch.cat([real * mask, mask], dim=1))
    comp = fake * (1 - mask) + real * mask
    d_real = discriminator(real)
    d_fake = discriminator(comp.detach())
    d_loss = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    g_fake = discriminator(comp)
    g_loss = -g_fake.mean() + F.l1_loss(fake, real)
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    losses.append(torch.stack([d_loss.detach(), g_loss.detach()]))
result = {"losses": losses, "G": [p.detach().clone() for p in generator.parameters()],
          "D": [p.detach().clone() for p in discriminator.parameters()]}
