"""generative-ai-projects, Lesson 21 (`part_5_gan_training.py`, with the model of `part_1` and the
losses of `part_2`): a DCGAN-style trainer whose discriminator pass on the fake images is not
detached.  Per batch it generates `fake_images = generator(noise)`, scores the real and the fake
images with the discriminator, computes `d_loss = discriminator_loss(real_output, fake_output)`
with a helper, and runs `d_loss.backward()`, which also goes back through the generator and frees
the generator's part of the graph.  The generator step then scores the same `fake_images` again
and calls `g_loss.backward()`, which has to go back through that freed generator graph.
Re-created in my own words with the lesson's structure: a `Generator` of transposed convolutions
from a noise vector, a `Discriminator` of convolutions ending in a sigmoid, the two loss helpers
(`generator_loss`, `discriminator_loss`), two Adam optimizers, and the epoch/batch loop.
Raises at `g_loss.backward()` ("Trying to backward through the graph a second time").
Source: https://github.com/martinyanev94/generative-ai-projects/blob/1ca4a371025cb2d5083c67a537294ab091c12524/Lesson_21_Advanced_Applications_Of_Generative_Models/part_5_gan_training.py"""
import torch
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self, input_dim=16, output_dim=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(input_dim, 8, 4, 1, 0),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.ConvTranspose2d(8, output_dim, 4, 2, 1),
            nn.Tanh(),
        )

    def forward(self, noise):
        return self.main(noise)


class Discriminator(nn.Module):
    def __init__(self, input_dim=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(input_dim, 8, 4, 2, 1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(8, 1, 4, 1, 0),
            nn.Sigmoid(),
        )

    def forward(self, images):
        return self.main(images).view(-1, 1)


def generator_loss(fake_output):
    return nn.BCELoss()(fake_output, torch.ones_like(fake_output))


def discriminator_loss(real_output, fake_output):
    real_loss = nn.BCELoss()(real_output, torch.ones_like(real_output))
    fake_loss = nn.BCELoss()(fake_output, torch.zeros_like(fake_output))
    return (real_loss + fake_loss) / 2


def make_loader(batches=2, batch_size=4):
    generator = torch.Generator().manual_seed(0)
    return [(torch.rand(batch_size, 3, 8, 8, generator=generator) * 2 - 1, torch.zeros(batch_size))
            for _ in range(batches)]


def run(num_epochs=1):
    torch.manual_seed(0)
    device = torch.device("cpu")
    generator = Generator(input_dim=16, output_dim=3).to(device)
    discriminator = Discriminator(input_dim=3).to(device)
    optimizer_g = optim.Adam(generator.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizer_d = optim.Adam(discriminator.parameters(), lr=0.0002, betas=(0.5, 0.999))
    train_loader = make_loader()

    for epoch in range(num_epochs):
        for real_images, _ in train_loader:
            real_images = real_images.to(device)

            # Train Discriminator
            noise = torch.randn(real_images.size(0), 16, 1, 1).to(device)
            fake_images = generator(noise)
            real_output = discriminator(real_images)
            fake_output = discriminator(fake_images)
            d_loss = discriminator_loss(real_output, fake_output)
            optimizer_d.zero_grad()
            d_loss.backward()
            optimizer_d.step()

            # Train Generator
            fake_output = discriminator(fake_images)
            g_loss = generator_loss(fake_output)
            optimizer_g.zero_grad()
            g_loss.backward()  # expect: ADL019
            optimizer_g.step()
