"""FactorVAE: the VAE's optimizer steps, then the discriminator's loss reuses
`d_z`, computed from the VAE's output before the step.
Source: https://github.com/1Konny/FactorVAE/issues/15"""
import torch
import torch.nn as nn
import torch.nn.functional as F

vae = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
optim_vae = torch.optim.Adam(vae.parameters())
optim_d = torch.optim.Adam(D.parameters())


def run():
    x = torch.randn(8, 4)
    z = vae(x)
    d_z = D(z)
    vae_loss = (z - x).pow(2).mean() + (d_z[:, 0] - d_z[:, 1]).mean()
    optim_vae.zero_grad()
    vae_loss.backward(retain_graph=True)
    optim_vae.step()  # expect: ADL003
    d_z_perm = D(torch.randn(8, 4))
    zeros = torch.zeros(8, dtype=torch.long)
    ones = torch.ones(8, dtype=torch.long)
    d_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))
    optim_d.zero_grad()
    d_loss.backward()
    optim_d.step()
