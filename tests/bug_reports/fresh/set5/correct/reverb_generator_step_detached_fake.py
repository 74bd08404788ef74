"""Image-to-reverb GAN (spectrogram generator conditioned on an image): in the generator's training
step the fake spectrogram is passed to the discriminator as `fake_spec.detach()`, so the
adversarial term `G_loss1` sends no gradient to the generator; only the L1 term trains it (no
error).
Source: https://github.com/nikhilsinghmus/image2reverb/issues/37 ("Is fake_spec.detach() in
Generator training step intentional?"; maintainer: "that .detach() should not be there for the
generator step and is a bug").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
g = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 12))
d = nn.Sequential(nn.Linear(12 + 6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(g.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(d.parameters(), lr=2e-3, betas=(0.5, 0.999))
features = torch.randn(8, 6)
spec = torch.randn(8, 12)

g_losses = []
for step in range(5):
    fake_spec = g(features)
    d_fake2 = d(torch.cat([fake_spec, features], 1))
    G_loss1 = F.mse_loss(d_fake2, torch.ones_like(d_fake2))
    G_loss2 = F.l1_loss(fake_spec, spec)
    G_loss = G_loss1 + 10 * G_loss2
    opt_g.zero_grad()
    G_loss.backward()
    opt_g.step()
    g_losses.append(G_loss.detach())

    d_real = d(torch.cat([spec, features], 1))
    d_fake = d(torch.cat([fake_spec.detach(), features], 1))
    D_loss = 0.5 * (F.mse_loss(d_real, torch.ones_like(d_real)) + F.mse_loss(d_fake, torch.zeros_like(d_fake)))
    opt_d.zero_grad()
    D_loss.backward()
    opt_d.step()
result = {"g_losses": g_losses, "g": [p.detach() for p in g.parameters()], "d": [p.detach() for p in d.parameters()]}
