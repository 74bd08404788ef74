"""FactorVAE: the VAE optimizer steps right after the VAE loss's backward, and the discriminator's
total-correlation loss, which reuses the discriminator's output on the first batch's latents, then
backpropagates through the encoder weights that step changed.
Source: https://github.com/YannDubs/disentangling-vae/issues/62 (answer: an optimizer.step() before
the second backward fails since PyTorch 1.5; move the VAE's step after the discriminator's backward).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
decoder = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 8))
discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
vae_optimizer = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
data1, data2 = torch.randn(6, 8), torch.randn(6, 8)


def encode(x):
    mean, log_var = encoder(x).chunk(2, dim=1)
    return mean + torch.exp(0.5 * log_var) * torch.randn_like(mean), mean, log_var


z1, mean, log_var = encode(data1)
rec_loss = F.mse_loss(decoder(z1), data1)
kl_loss = -0.5 * (1 + log_var - mean.pow(2) - log_var.exp()).sum(1).mean()
d_z = discriminator(z1)
tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
vae_loss = rec_loss + kl_loss + 6.0 * tc_loss
vae_optimizer.zero_grad()
vae_loss.backward(retain_graph=True)

z2, _, _ = encode(data2)
z_perm = torch.stack([z2[torch.randperm(6), i] for i in range(2)], dim=1).detach()
ones, zeros = torch.ones(6, dtype=torch.long), torch.zeros(6, dtype=torch.long)
d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(discriminator(z_perm), ones))
d_optimizer.zero_grad()
d_tc_loss.backward()
vae_optimizer.step()
d_optimizer.step()
result = {"losses": [vae_loss.detach(), d_tc_loss.detach()],
          "params": [p.detach() for m in (encoder, decoder, discriminator) for p in m.parameters()]}
