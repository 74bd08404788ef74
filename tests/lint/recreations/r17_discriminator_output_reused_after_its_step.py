"""Softmax GAN: `d_real` is computed before the discriminator's step and reused
in the generator's loss after it (found while measuring precision).
Source: https://github.com/eriklindernoren/PyTorch-GAN/blob/36d3c77e5ff20ebe0aeefd322326a134a279b93e/implementations/softmax_gan/softmax_gan.py#L145-L158"""
import torch
import torch.nn as nn

generator = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 4))
discriminator = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer_G = torch.optim.Adam(generator.parameters())
optimizer_D = torch.optim.Adam(discriminator.parameters())


def run():
    real = torch.randn(6, 4)
    gen = generator(torch.randn(6, 2))
    d_real = discriminator(real)
    d_fake = discriminator(gen)
    z = torch.sum(torch.exp(-d_real)) + torch.sum(torch.exp(-d_fake))
    d_loss = torch.sum(d_real) / 6 + torch.log(z)
    d_loss.backward(retain_graph=True)
    optimizer_D.step()  # expect: ADL003
    g_loss = (torch.sum(d_real) + torch.sum(d_fake)) / 12 + torch.log(z)
    g_loss.backward()
    optimizer_G.step()
