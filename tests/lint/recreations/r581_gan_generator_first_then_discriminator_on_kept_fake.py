"""A blog post comparing GAN update strategies (`detach()` against
`retain_graph=True`) shows the "train the generator first" order: the
generator's loss is backpropagated through the discriminator and the
generator steps, then the discriminator's loss is computed on the same
generated batch without `detach()`.  Its backward walks back into the
generator's graph, which the generator's backward already freed (and whose
weights the generator's step changed in place), so the discriminator's
`backward()` raises.  Re-created as the post's script shape: `Generator` and
`Discriminator` MLPs, the adversarial loss, two Adam optimizers, and a
`train_epoch` loop over real batches.  Raises at the first batch.
Buggy line: `d_fake = discriminator(gen_imgs)` (the fake batch still attached
to the generator's freed graph).
Source: https://chowdera.com/2020/11/202011092352588940.html"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_dim=8, img_dim=16):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(latent_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, img_dim), nn.Tanh())

    def forward(self, z):
        return self.model(z)


class Discriminator(nn.Module):
    def __init__(self, img_dim=16):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(img_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img)


def train_epoch(generator, discriminator, loader, optimizer_G, optimizer_D, latent_dim=8):
    adversarial_loss = nn.BCELoss()
    for imgs in loader:
        valid = torch.ones(imgs.size(0), 1)
        fake = torch.zeros(imgs.size(0), 1)

        # train the generator first
        optimizer_G.zero_grad()
        z = torch.randn(imgs.size(0), latent_dim)
        gen_imgs = generator(z)
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        g_loss.backward()
        optimizer_G.step()

        # then the discriminator, on the same generated batch
        optimizer_D.zero_grad()
        real_loss = adversarial_loss(discriminator(imgs), valid)
        d_fake = discriminator(gen_imgs)
        fake_loss = adversarial_loss(d_fake, fake)
        d_loss = (real_loss + fake_loss) / 2
        d_loss.backward()  # expect: ADL019
        optimizer_D.step()


def run():
    torch.manual_seed(0)
    generator, discriminator = Generator(), Discriminator()
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    loader = [torch.rand(4, 16) * 2 - 1 for _ in range(2)]
    train_epoch(generator, discriminator, loader, optimizer_G, optimizer_D)
