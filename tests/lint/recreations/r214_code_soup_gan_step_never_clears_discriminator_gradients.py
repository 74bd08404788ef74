"""code-soup's GAN class trains on one batch per `step()`: the
discriminator's real and fake losses are backpropagated and its optimizer
steps, then the generator's loss is backpropagated through the
discriminator and the generator steps.  Only `self.generator.zero_grad()`
is ever called: the discriminator's gradients are never cleared, so each of
its steps applies the sum of every earlier batch's discriminator gradients
plus the generator loss's gradients that `errG.backward()` left in it.
Nothing raises.  The fix calls `self.discriminator.zero_grad()` at the start
of `step()`.
Buggy line: the training loop in `train` (nothing clears the
discriminator's gradients).
Expected finding: ADL018 at the loop.
Source: https://github.com/Adversarial-Deep-Learning/code-soup/pull/73"""
import copy

import torch
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self, image_size, channels, latent_dims, lr):
        super(Generator, self).__init__()
        self.image_size = image_size
        self.channels = channels
        self.latent_dims = latent_dims
        self.main = nn.Sequential(
            nn.Linear(self.latent_dims, 16),
            nn.LeakyReLU(0.2),
            nn.Linear(16, self.image_size * self.image_size * self.channels),
            nn.Tanh(),
        )
        self.optimizer = optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        output = self.main(x)
        return output.view(-1, self.channels, self.image_size, self.image_size)


class Discriminator(nn.Module):
    def __init__(self, image_size, channels, lr):
        super(Discriminator, self).__init__()
        self.image_size = image_size
        self.channels = channels
        self.main = nn.Sequential(
            nn.Linear(self.image_size * self.image_size * self.channels, 16),
            nn.LeakyReLU(0.2),
            nn.Linear(16, 1),
            nn.Sigmoid(),
        )
        self.optimizer = optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        x = x.view(-1, self.image_size * self.image_size * self.channels)
        return self.main(x)


class GAN:
    def __init__(self, image_size, channels, latent_dims, lr):
        self.latent_dims = latent_dims
        self.generator = Generator(image_size, channels, latent_dims, lr)
        self.discriminator = Discriminator(image_size, channels, lr)
        self.criterion = torch.nn.BCELoss()
        self.real_label, self.fake_label = 1.0, 0.0

    def step(self, data, noise):
        real_image, _ = data
        batch_size = real_image.shape[0]
        label = torch.full((batch_size,), self.real_label, dtype=torch.float)
        output = self.discriminator(real_image).view(-1)
        errD_real = self.criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        fake = self.generator(noise)
        label.fill_(self.fake_label)
        output = self.discriminator(fake.detach()).view(-1)
        errD_fake = self.criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        self.discriminator.optimizer.step()

        self.generator.zero_grad()
        label.fill_(self.real_label)
        output = self.discriminator(fake).view(-1)
        errG = self.criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        self.generator.optimizer.step()
        return D_x, D_G_z1, errD, D_G_z2


def train(gan, batches, noises):
    for data, noise in zip(batches, noises):  # missed: ADL018
        gan.step(data, noise)


def _inputs():
    torch.manual_seed(0)
    batches = [(torch.rand(2, 1, 3, 3), torch.zeros(2)) for _ in range(2)]
    noises = [torch.randn(2, 4) for _ in range(2)]
    return batches, noises


def bug_shows():
    """The discriminator's second update is not the one its own batch gives:
    the first batch's gradients (and the generator loss's) are still in it."""
    batches, noises = _inputs()
    torch.manual_seed(1)
    gan = GAN(3, 1, 4, lr=0.1)
    train(gan, batches[:1], noises[:1])
    cleared = copy.deepcopy(gan)
    cleared.discriminator.zero_grad()
    train(gan, batches[1:], noises[1:])
    train(cleared, batches[1:], noises[1:])
    return not torch.allclose(gan.discriminator.main[0].weight, cleared.discriminator.main[0].weight)


def run():
    batches, noises = _inputs()
    train(GAN(3, 1, 4, lr=0.1), batches, noises)
