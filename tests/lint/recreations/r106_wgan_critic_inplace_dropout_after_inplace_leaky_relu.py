"""Improved-improved WGAN (consistency term): the critic's blocks are built
as `nn.Sequential(nn.Conv2d(...), activation(inplace=True),
nn.Dropout(p=dropout_rate, inplace=True))` with `activation=nn.LeakyReLU`
passed in as a class.  The in-place LeakyReLU keeps its result for backward
and the in-place dropout overwrites it, so the critic's backward (here the
gradient penalty's `autograd.grad(..., create_graph=True)`) fails ("modified
by an inplace operation"); users went back to PyTorch 0.3 to run it.
Source: https://github.com/Randl/improved-improved-wgan-pytorch/issues/1"""
from collections import OrderedDict

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn


class WGAN(nn.Module):
    def __init__(self):
        super(WGAN, self).__init__()

    def init_params(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)


class WGANDiscriminator(WGAN):
    def __init__(self, input_size=16, in_channels=3, num_filters=4, activation=nn.LeakyReLU, dropout_rate=0.5):
        super(WGANDiscriminator, self).__init__()
        self.activation = activation
        self.input_size = input_size
        self.dropout_rate = dropout_rate
        self.first_conv = nn.Sequential(nn.Conv2d(in_channels, num_filters, kernel_size=5, stride=2, padding=2),
                                        activation(inplace=True),
                                        nn.Dropout(p=dropout_rate, inplace=True))  # expect: ADL001
        self.conv, last_filter = self._make_conv(num_filters)
        self.final_fc = nn.Linear(last_filter * 4 * 4, 1)
        self.init_params()

    def forward(self, x):
        x = self.first_conv(x)
        pre_last = self.conv(x)
        pre_last = pre_last.view(pre_last.shape[0], -1)
        x = self.final_fc(pre_last)
        return x, pre_last

    def _make_conv(self, num_filters):
        modules = OrderedDict()
        stage_name = "Conv"
        for i in range(int(np.log2(self.input_size)) - 3):
            name = stage_name + "_{}".format(i + 1)
            module = nn.Sequential(
                nn.Conv2d(num_filters, num_filters * 2, kernel_size=5, stride=2, padding=2),
                self.activation(inplace=True),
                nn.Dropout(p=self.dropout_rate, inplace=True))  # the same hazard, not found: `self.activation` is set in `__init__`
            num_filters *= 2
            modules[name] = module
        return nn.Sequential(modules), num_filters


def gradient_penalty(fake_data, real_data, discriminator):
    alpha = torch.rand(fake_data.shape[0], 1, 1, 1).expand(fake_data.shape)
    interpolates = alpha * fake_data + (1 - alpha) * real_data
    interpolates.requires_grad_(True)
    disc_interpolates, _ = discriminator(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train_critic(netD, real_inputs, fake_inputs, lambda1=10.0):
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4)
    optimizerD.zero_grad()
    errD_real, _ = netD(real_inputs)
    errD_fake, _ = netD(fake_inputs)
    errD = -errD_real.mean(0) + errD_fake.mean(0) + lambda1 * gradient_penalty(fake_inputs, real_inputs, netD)
    errD.backward()
    optimizerD.step()


def run():
    torch.manual_seed(0)
    train_critic(WGANDiscriminator(), torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16))
