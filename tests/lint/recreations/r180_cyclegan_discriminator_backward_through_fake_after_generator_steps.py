"""simple_CycleGAN trains both generators first and the discriminators last
in each iteration.  `fake_y = netG_x(real_x)` is built for the X -> Y' -> X^
cycle, the generator loss is backpropagated with `retain_graph=True` and
`optimizer_g.step()` updates both generators (twice: once per cycle); then
the discriminator loss uses `netD_x(fake_y)` without `detach()`, so
`loss_D_x.backward()` goes back through the retained generator graph whose
weights the two steps have modified in place ("one of the variables needed
for gradient computation has been modified by an inplace operation",
[3, 64, 7, 7], the generator's first convolution).
Buggy line: `loss_D_x.backward()` (through `fake_y`, after `optimizer_g.step()`).
Expected finding: ADL003 at the generator step before it.
Source: https://github.com/cy-xu/simple_CycleGAN/issues/3"""
import itertools

import torch as t
import torch.nn as nn


class ResnetGenerator(nn.Module):
    def __init__(self, channels=3, width=8):
        super().__init__()
        self.model = nn.Sequential(
            nn.ReflectionPad2d(3),
            nn.Conv2d(channels, width, kernel_size=7),
            nn.InstanceNorm2d(width),
            nn.ReLU(True),
            nn.Conv2d(width, channels, kernel_size=3, padding=1),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, channels=3, width=8):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(channels, width, kernel_size=4, stride=2, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.Conv2d(width, 1, kernel_size=4, stride=1, padding=1),
        )

    def forward(self, x):
        return self.model(x)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = t.ones_like(prediction) if target_is_real else t.zeros_like(prediction)
        return self.loss(prediction, target)


def train(dataset, lambda_X=10.0, lambda_Y=10.0):
    netG_x = ResnetGenerator()
    netG_y = ResnetGenerator()
    netD_x = NLayerDiscriminator()
    netD_y = NLayerDiscriminator()
    optimizer_g = t.optim.Adam(itertools.chain(netG_x.parameters(), netG_y.parameters()), lr=2e-4)
    optimizer_d = t.optim.Adam(itertools.chain(netD_x.parameters(), netD_y.parameters()), lr=2e-4)
    criterionGAN = GANLoss()
    criterionCycle = nn.L1Loss()

    for data in dataset:
        real_x = data['A']
        real_y = data['B']

        # X -> Y' -> X^ cycle
        optimizer_g.zero_grad()
        fake_y = netG_x(real_x)
        loss_G_X = criterionGAN(netD_x(fake_y), True)
        x_hat = netG_y(fake_y)
        loss_X = loss_G_X + criterionCycle(x_hat, real_x) * lambda_X
        loss_X.backward(retain_graph=True)
        optimizer_g.step()  # expect: ADL003

        # Y -> X' -> Y^ cycle
        optimizer_g.zero_grad()
        fake_x = netG_y(real_y)
        loss_G_Y = criterionGAN(netD_y(fake_x), True)
        y_hat = netG_x(fake_x)
        loss_Y = loss_G_Y + criterionCycle(y_hat, real_y) * lambda_Y
        loss_Y.backward(retain_graph=True)
        optimizer_g.step()  # expect: ADL003

        # netD_x
        optimizer_d.zero_grad()
        loss_D_x_real = criterionGAN(netD_x(real_y), True)
        loss_D_x_fake = criterionGAN(netD_x(fake_y), False)
        loss_D_x = (loss_D_x_real + loss_D_x_fake) * 0.5
        loss_D_x.backward()
        optimizer_d.step()


def run():
    t.manual_seed(0)
    dataset = [{'A': t.randn(1, 3, 16, 16), 'B': t.randn(1, 3, 16, 16)}]
    train(dataset)
