"""generative-ai-projects, Lesson 5 (`part_6_train_gan.py.py`, "Generating Diverse Images"): a
training function whose only optimizer is built over the generator
(`optimizer = torch.optim.Adam(generator.parameters(), ...)`), while the loss it minimises is the
discriminator's: `real_loss` on the real images plus `fake_loss` on
`discriminator(fake_images.detach())`.  The detach cuts the only path from the loss to the
generator, so `total_loss.backward()` leaves every generator `.grad` empty and
`optimizer.step()` never changes the generator (nor, having no optimizer, the discriminator).
Re-created in my own words with the lesson's structure (a second program of r776's repository,
a different mistake): a fully connected `Generator` from a 100-dimensional latent vector, a
`Discriminator` ending in a sigmoid, `criterion = nn.BCELoss()`, and `train(generator,
dataloader, epochs)`.
Nothing raises: `bug_shows()` shows the generator's weights unchanged after training.
Source: https://github.com/martinyanev94/generative-ai-projects/blob/1ca4a371025cb2d5083c67a537294ab091c12524/Lesson_5_Generating_Diverse_Images/part_6_train_gan.py.py"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_dim=100, image_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, image_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, image_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(image_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
generator = Generator()
discriminator = Discriminator()
dataloader = [(torch.rand(4, 16) * 2 - 1, torch.zeros(4)) for _ in range(2)]

criterion = nn.BCELoss()
optimizer = torch.optim.Adam(generator.parameters(), lr=0.0002, betas=(0.5, 0.999))


def train(generator, dataloader, epochs=1):
    for epoch in range(epochs):
        for real_images, _ in dataloader:
            batch_size = real_images.size(0)
            latent_vectors = torch.randn(batch_size, 100)
            fake_images = generator(latent_vectors)
            real_labels = torch.ones(batch_size, 1)
            fake_labels = torch.zeros(batch_size, 1)
            real_loss = criterion(discriminator(real_images), real_labels)
            fake_loss = criterion(discriminator(fake_images.detach()), fake_labels)  # missed: no rule, the optimizer's parameters reached only through a detached value
            optimizer.zero_grad()
            total_loss = real_loss + fake_loss
            total_loss.backward()
            optimizer.step()
            print(f"Epoch [{epoch}/{epochs}], Loss: {total_loss.item():.4f}")


def bug_shows():
    before = [p.detach().clone() for p in generator.parameters()]
    train(generator, dataloader)
    return all(torch.equal(b, p) for b, p in zip(before, generator.parameters()))
