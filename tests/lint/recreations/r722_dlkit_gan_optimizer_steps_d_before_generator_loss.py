"""dlkit (a GAN / segmentation toolkit), `framework/nn/modules/gan/optimize.py`: `GANOptimizer.train_step`
takes the pair of losses the model built in one pass (`gan_model.loss_pair(data)`), maximises the
discriminator loss and steps `optD`, then minimises the generator loss -- whose graph goes through
`D(fake)`, computed before that step.  The step wrote the discriminator's weights in place, so
the generator's backward finds saved weights at a newer version and raises.
Re-created in my own words with the file's structure: `Generator` and `Discriminator` modules on
2-d points (the repository's `examples/euclidean.py`), a Wasserstein loss object, `GANLossPair`,
`GANModel.loss_pair`, `GANParameters` and `GANOptimizer`, and the example's training loop.
Raises at `loss.generator_loss.backward()`; buggy line: `self.optD.step()` before it.
Source: https://github.com/nazarblch/dlkit/blob/8ccf6ea2458afd464ce07382a9afe6164d9f8da6/framework/nn/modules/gan/optimize.py"""
import torch
import torch.nn as nn
from torch import optim


class NormalNoise:
    def __init__(self, size):
        self.size = size

    def sample(self, n):
        return torch.randn(n, self.size)


class Generator(nn.Module):
    def __init__(self, noise):
        super().__init__()
        self.noise = noise
        self.main = nn.Sequential(nn.Linear(noise.size, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, n):
        return self.main(self.noise.sample(n))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.main(x)


class WassersteinLoss:
    def discriminator_loss(self, d_real, d_fake):
        return d_real.mean() - d_fake.mean()

    def generator_loss(self, d_fake):
        return -d_fake.mean()


class GANLossPair:
    def __init__(self, generator_loss, discriminator_loss):
        self.generator_loss = generator_loss
        self.discriminator_loss = discriminator_loss


class GANModel:
    def __init__(self, generator, discriminator, loss):
        self.generator = generator
        self.discriminator = discriminator
        self.loss = loss

    def discriminator_loss(self, real, fake):
        d_real = self.discriminator(real.detach())
        d_fake = self.discriminator(fake.detach())
        return self.loss.discriminator_loss(d_real, d_fake)

    def generator_loss(self, fake):
        return self.loss.generator_loss(self.discriminator(fake))

    def loss_pair(self, real):
        fake = self.generator(real.size(0))
        return GANLossPair(self.generator_loss(fake), self.discriminator_loss(real, fake))

    def parameters(self):
        return GANParameters(self.generator.parameters(), self.discriminator.parameters())


class GANParameters:
    def __init__(self, generator_parameters, discriminator_parameters):
        self.generator_parameters = generator_parameters
        self.discriminator_parameters = discriminator_parameters


class GANOptimizer:
    def __init__(self, parameters, generator_learning_rate, discriminator_learning_rate, betas=(0.5, 0.9)):
        self.optD = optim.Adam(parameters.discriminator_parameters, lr=discriminator_learning_rate, betas=betas)
        self.optG = optim.Adam(parameters.generator_parameters, lr=generator_learning_rate, betas=betas)

    def train_step(self, loss):
        self.optD.zero_grad()
        (-loss.discriminator_loss).backward()
        self.optD.step()  # missed: ADL003, the losses are built by another class (`GANModel.loss_pair`) and read as attributes of a pair object in the optimizer class's `train_step`
        self.optG.zero_grad()
        loss.generator_loss.backward()
        self.optG.step()


def run():
    torch.manual_seed(0)
    n = 200
    xs = (torch.arange(0, n, dtype=torch.float32) / 10.0).view(n, 1)
    ys = torch.cat((xs.cos(), xs.sin()), dim=1)
    gan_model = GANModel(Generator(NormalNoise(2)), Discriminator(), WassersteinLoss())
    optimizer = GANOptimizer(gan_model.parameters(), 0.003, 0.006)
    for it in range(3):
        data = ys[it * 16:(it + 1) * 16]
        loss = gan_model.loss_pair(data)
        optimizer.train_step(loss)
