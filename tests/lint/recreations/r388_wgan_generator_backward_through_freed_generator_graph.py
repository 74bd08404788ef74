"""PyTorch-GAN's WGAN trains the critic on `fake_imgs = generator(z)` without
detaching it: `loss_D.backward()` also backpropagates into the generator and
frees that part of the graph.  Every `n_critic` batches the generator's loss
is computed from the same `fake_imgs`, and `loss_G.backward()` goes back
through the freed generator graph ("Trying to backward through the graph a
second time").  The fix feeds the critic `fake_imgs.detach()` (the reported
typo) and generates new images for the generator's step.
Buggy line: `loss_G.backward()` in `train`.
Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/6"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_dim=4, img_dim=8):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(latent_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, img_dim), nn.Tanh())

    def forward(self, z):
        return self.model(z)


class Discriminator(nn.Module):
    def __init__(self, img_dim=8):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(img_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, img):
        return self.model(img)


def train(generator, discriminator, dataloader, latent_dim=4, n_critic=1, clip_value=0.01):
    optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
    optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)
    for i, imgs in enumerate(dataloader):
        optimizer_D.zero_grad()
        z = torch.randn(imgs.size(0), latent_dim)
        fake_imgs = generator(z)
        loss_D = -torch.mean(discriminator(imgs)) + torch.mean(discriminator(fake_imgs))
        loss_D.backward()
        optimizer_D.step()
        for p in discriminator.parameters():
            p.data.clamp_(-clip_value, clip_value)

        if i % n_critic == 0:
            optimizer_G.zero_grad()
            loss_G = -torch.mean(discriminator(fake_imgs))
            loss_G.backward()  # expect: ADL019
            optimizer_G.step()


def run():
    torch.manual_seed(0)
    train(Generator(), Discriminator(), [torch.randn(3, 8) for _ in range(2)])
