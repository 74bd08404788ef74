"""DeblurGAN's conditional GAN runs five critic updates per generator update
when the discriminator is a WGAN-GP critic (`criticUpdates = 5`).  The
restored image `self.fake_B` is computed once, in `forward()`, and the
critic's loss is computed from it without `detach()`; the first critic
update's `self.loss_D.backward()` frees the generator's part of that graph
and the second one reaches it again ("Trying to backward through the graph
a second time").  Other GAN types run a single critic update and never hit
it.  The fix detaches the fake image in the critic's loss (the project
first retained the graph instead).
Buggy line: `self.loss_D.backward()` in `backward_D`, run in the loop of
`optimize_parameters`.
Expected finding: ADL019 there.
Source: https://github.com/KupynOrest/DeblurGAN/issues/56"""
import torch
import torch.nn as nn
from torch import autograd


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=4):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, ngf, 3, padding=1), nn.ReLU(True), nn.Conv2d(ngf, 3, 3, padding=1))

    def forward(self, x):
        return torch.tanh(self.model(x) + x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=4):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True),
                                   nn.Conv2d(ndf, 1, 4, padding=1))

    def forward(self, x):
        return self.model(x)


class DiscLossWGANGP:
    def __init__(self, LAMBDA=10):
        self.LAMBDA = LAMBDA

    def get_g_loss(self, net, realA, fakeB):
        self.D_fake = net.forward(fakeB)
        return -self.D_fake.mean()

    def calc_gradient_penalty(self, netD, real_data, fake_data):
        alpha = torch.rand(1, 1, 1, 1).expand(real_data.size())
        interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
        disc_interpolates = netD.forward(interpolates)
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones(disc_interpolates.size()),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        return ((gradients.view(gradients.size(0), -1).norm(2, dim=1) - 1) ** 2).mean() * self.LAMBDA

    def get_loss(self, net, realA, fakeB, realB):
        self.D_fake = net.forward(fakeB).mean()
        self.D_real = net.forward(realB).mean()
        self.loss_D = self.D_fake - self.D_real
        gradient_penalty = self.calc_gradient_penalty(net, realB.detach(), fakeB.detach())
        return self.loss_D + gradient_penalty


class ConditionalGAN:
    def __init__(self, gan_type='wgan-gp', lambda_A=100):
        self.netG = ResnetGenerator()
        self.netD = NLayerDiscriminator()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.criticUpdates = 5 if gan_type == 'wgan-gp' else 1
        self.discLoss = DiscLossWGANGP()
        self.contentLoss = nn.L1Loss()
        self.lambda_A = lambda_A

    def set_input(self, input_A, input_B):
        self.input_A = input_A
        self.input_B = input_B

    def forward(self):
        self.real_A = self.input_A
        self.fake_B = self.netG.forward(self.real_A)
        self.real_B = self.input_B

    def backward_D(self):
        self.loss_D = self.discLoss.get_loss(self.netD, self.real_A, self.fake_B, self.real_B)
        self.loss_D.backward()  # missed: ADL019

    def backward_G(self):
        self.loss_G_GAN = self.discLoss.get_g_loss(self.netD, self.real_A, self.fake_B)
        self.loss_G_Content = self.contentLoss(self.fake_B, self.real_B) * self.lambda_A
        self.loss_G = self.loss_G_GAN + self.loss_G_Content
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        for iter_d in range(self.criticUpdates):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


def run():
    torch.manual_seed(0)
    model = ConditionalGAN()
    model.set_input(torch.rand(2, 3, 8, 8) * 2 - 1, torch.rand(2, 3, 8, 8) * 2 - 1)
    model.optimize_parameters()
