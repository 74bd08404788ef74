"""Shift-Net's inpainting model with the relativistic average GAN loss
(`re_avg_gan`): `backward_D` stores the discriminator's predictions on the
fake and the real patch in `self.pred_fake` / `self.pred_real` and
backpropagates the discriminator's loss; `backward_G` then builds the
generator's relativistic loss from `self.pred_fake`, the prediction of the
discriminator pass whose graph `self.loss_D.backward()` has already freed,
and `self.loss_G.backward()` fails ("Trying to backward through the graph
a second time").  (Retaining the graph instead, the later fix, still
backpropagates through a discriminator that `optimizer_D.step()` has
changed.)  The fix recomputes the fake prediction in `backward_G`.
Buggy line: `self.loss_G.backward()` in `backward_G`, through
`self.pred_fake` set in `backward_D`.
Expected finding: ADL019 there.
Source: https://github.com/Zhaoyi-Yan/Shift-Net_pytorch/issues/34"""
import torch
import torch.nn as nn


class UnetGenerator(nn.Module):
    def __init__(self, ngf=4):
        super().__init__()
        self.down = nn.Conv2d(3, ngf, 4, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(ngf, 3, 4, stride=2, padding=1)

    def forward(self, x):
        return torch.tanh(self.up(nn.functional.leaky_relu(self.down(x), 0.2)))


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=4):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True),
                                   nn.Conv2d(ndf, 1, 4, stride=1, padding=1))

    def forward(self, x):
        return self.model(x)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.BCEWithLogitsLoss()

    def __call__(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return self.loss(prediction, target)


class ShiftNetModel:
    def initialize(self, gan_type='re_avg_gan', gan_weight=0.2, lambda_A=100):
        self.gan_type = gan_type
        self.gan_weight = gan_weight
        self.lambda_A = lambda_A
        self.netG = UnetGenerator()
        self.netD = NLayerDiscriminator()
        self.criterionGAN = GANLoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A = real_A
        self.real_B = real_B

    def set_requires_grad(self, net, requires_grad):
        for param in net.parameters():
            param.requires_grad = requires_grad

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_B = self.fake_B
        real_B = self.real_B
        self.pred_fake = self.netD(fake_B.detach())
        self.pred_real = self.netD(real_B)
        if self.gan_type == 're_avg_gan':
            self.loss_D = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), True)
                           + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), False)) / 2.
        else:
            self.loss_D = (self.criterionGAN(self.pred_fake, False) + self.criterionGAN(self.pred_real, True)) * 0.5
        self.loss_D.backward()

    def backward_G(self):
        fake_B = self.fake_B
        real_B = self.real_B
        pred_fake = self.netD(fake_B)
        if self.gan_type == 're_avg_gan':
            self.pred_real = self.netD(real_B)
            self.loss_G_GAN = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), False)
                               + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), True)) / 2.
            self.loss_G_GAN *= self.gan_weight
        else:
            self.loss_G_GAN = self.criterionGAN(pred_fake, True) * self.gan_weight
        self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.lambda_A
        self.loss_G = self.loss_G_L1 + self.loss_G_GAN
        self.loss_G.backward()  # missed: ADL019

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()

        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


def run():
    torch.manual_seed(0)
    model = ShiftNetModel()
    model.initialize()
    for real_A, real_B in [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8))]:
        model.set_input(real_A, real_B)
        model.optimize_parameters()
