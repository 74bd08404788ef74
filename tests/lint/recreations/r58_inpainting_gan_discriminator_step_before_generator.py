"""Region-normalization inpainting model: `process()` builds the
discriminator's and the generator's losses from the same discriminator calls,
then backpropagates the discriminator loss and steps it before the generator
loss's backward ("modified by an inplace operation").
Source: https://github.com/geekyutao/RN/pull/19"""
import torch
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(True))
        self.decoder = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x, mask):
        return torch.sigmoid(self.decoder(self.encoder(torch.cat([x, mask], 1))))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2, True))
        self.conv2 = nn.Conv2d(8, 1, 4, 1, 1)

    def forward(self, x):
        return torch.sigmoid(self.conv2(self.conv1(x)))


class InpaintingModel(nn.Module):
    def __init__(self, lr=1e-4):
        super().__init__()
        self.generator = Generator()
        self.discriminator = Discriminator()
        self.adversarial_loss = nn.BCELoss()
        self.l1_loss = nn.L1Loss()
        self.gen_optimizer = optim.Adam(self.generator.parameters(), lr=lr)
        self.dis_optimizer = optim.Adam(self.discriminator.parameters(), lr=lr)

    def process(self, images, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self.generator(images * (1 - masks), masks)

        dis_real = self.discriminator(images)
        dis_fake = self.discriminator(outputs.detach())
        dis_loss = (self.adversarial_loss(dis_real, torch.ones_like(dis_real))
                    + self.adversarial_loss(dis_fake, torch.zeros_like(dis_fake))) / 2

        gen_fake = self.discriminator(outputs)
        gen_loss = self.adversarial_loss(gen_fake, torch.ones_like(gen_fake)) * 0.1
        gen_loss = gen_loss + self.l1_loss(outputs, images)

        dis_loss.backward()
        self.dis_optimizer.step()  # expect: ADL003
        gen_loss.backward()
        self.gen_optimizer.step()
        return outputs, gen_loss, dis_loss


def run():
    torch.manual_seed(0)
    model = InpaintingModel()
    masks = (torch.rand(2, 1, 8, 8) > 0.5).float()
    model.process(torch.rand(2, 3, 8, 8), masks)
