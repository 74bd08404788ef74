"""DeblurGAN trains its generator against a WGAN-GP critic, running
`criticUpdates` critic steps per generator step on the same `fake_B`.  The
gradient penalty interpolates between the sharp image and `fake_B` without
detaching it, so each critic loss reaches back into the generator's graph;
the first critic backward frees it and the second fails ("Trying to backward
through the graph a second time, but the buffers have already been freed").
The pull request added `retain_graph=True`; the fix that keeps the
generator out of the critic's update interpolates with `fake_B.detach()`.
Buggy line: `self.loss_D.backward()` in `ConditionalGAN.backward_D`, the
penalty computed on `fakeB` in `DiscLossWGANGP.calc_gradient_penalty`.
Expected finding: ADL019 there.
Source: https://github.com/KupynOrest/DeblurGAN/pull/91"""
import torch
import torch.nn as nn
from torch import autograd


class DiscLossWGANGP:
    def __init__(self, LAMBDA=10.0):
        self.LAMBDA = LAMBDA

    def calc_gradient_penalty(self, netD, real_data, fake_data):
        alpha = torch.rand(real_data.shape[0], 1)
        interpolates = alpha * real_data + (1 - alpha) * fake_data
        disc_interpolates = netD(interpolates)
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones_like(disc_interpolates),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * self.LAMBDA

    def get_loss(self, net, realA, fakeB, realB):
        D_fake = net(fakeB.detach()).mean()
        D_real = net(realB).mean()
        return D_fake - D_real + self.calc_gradient_penalty(net, realB, fakeB)

    def get_g_loss(self, net, realA, fakeB):
        return -net(fakeB).mean()


class ConditionalGAN:
    def __init__(self, critic_updates=2):
        self.netG = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
        self.netD = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4)
        self.discLoss = DiscLossWGANGP()
        self.criticUpdates = critic_updates

    def set_input(self, blurred, sharp):
        self.real_A, self.real_B = blurred, sharp

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        self.loss_D = self.discLoss.get_loss(self.netD, self.real_A, self.fake_B, self.real_B)
        self.loss_D.backward()  # missed: ADL019

    def backward_G(self):
        self.loss_G = self.discLoss.get_g_loss(self.netD, self.real_A, self.fake_B) + (self.fake_B - self.real_B).abs().mean()
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        for _ in range(self.criticUpdates):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


def run():
    torch.manual_seed(0)
    model = ConditionalGAN()
    model.set_input(torch.randn(4, 6), torch.randn(4, 6))
    model.optimize_parameters()
