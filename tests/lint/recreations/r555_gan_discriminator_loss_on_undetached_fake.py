"""An error-knowledge page on "RuntimeError: Trying to backward through the
graph a second time": "reusing a non-detached tensor across multiple losses
triggers this error"; for GAN training the workaround is `d_loss =
discriminator(fake_images.detach())` for the discriminator and a separate
forward for the generator.  Re-created as a GAN trainer that scores one
generated batch once, builds both losses from that score, and
backpropagates the discriminator's loss before the generator's: the first
backward frees the graph the second needs.  Raises.
Buggy line: `g_loss.backward()` (through the graph `d_loss.backward()` freed).
Source: https://deadends.dev/cuda/backward-through-graph-twice/cuda12-linux"""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, latent=4, data=6):
        self.generator = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, data))
        self.discriminator = nn.Sequential(nn.Linear(data, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()
        self.latent = latent

    def train_step(self, real):
        z = torch.randn(real.shape[0], self.latent)
        fake_images = self.generator(z)
        fake_score = self.discriminator(fake_images)
        real_score = self.discriminator(real)
        ones, zeros = torch.ones_like(real_score), torch.zeros_like(real_score)

        d_loss = self.bce(real_score, ones) + self.bce(fake_score, zeros)
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()

        g_loss = self.bce(fake_score, ones)
        self.opt_g.zero_grad()
        g_loss.backward()  # expect: ADL019
        self.opt_g.step()
        return d_loss.item(), g_loss.item()


def run():
    torch.manual_seed(0)
    GANTrainer().train_step(torch.randn(8, 6))
