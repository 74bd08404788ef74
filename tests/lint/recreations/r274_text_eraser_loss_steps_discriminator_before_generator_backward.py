"""EraseNet trains its discriminator inside the loss module: the
`forward` of `LossWithGAN_STE` scores the generator's output with the
discriminator, backpropagates the discriminator loss with
`retain_graph=True` and calls `self.D_optimizer.step()`, then adds
`0.1 * D_fake` (computed from the same discriminator output, before the
step) to the generator loss it returns.  The training script's
`G_loss.backward()` goes back through the discriminator's weights that the
step changed in place ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The fix scores
the output again after the step.
Buggy line: `self.D_optimizer.step()` in `LossWithGAN_STE.forward`.
Expected finding: ADL003 there.
Source: https://github.com/lcy0604/EraseNet/issues/5"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator_STE(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(in_channels + 1, 4, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(4, 1, 3, padding=1))

    def forward(self, x, mask):
        return self.net(torch.cat([x, mask], dim=1))


class STRnet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(self.net(x))


class LossWithGAN_STE(nn.Module):
    def __init__(self, lr, betas=(0.5, 0.9)):
        super().__init__()
        self.l1 = nn.L1Loss()
        self.discriminator = Discriminator_STE(3)
        self.D_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=betas)

    def forward(self, input, mask, output, gt):
        self.discriminator.zero_grad()
        D_real = self.discriminator(gt, mask)
        D_real = D_real.mean().sum() * -1
        D_fake = self.discriminator(output, mask)
        D_fake = D_fake.mean().sum() * 1
        D_loss = torch.mean(F.relu(1. + D_real)) + torch.mean(F.relu(1. + D_fake))
        D_fake = -torch.mean(D_fake)

        self.D_optimizer.zero_grad()
        D_loss.backward(retain_graph=True)
        self.D_optimizer.step()  # missed: ADL003

        holeLoss = 10 * self.l1((1 - mask) * output, (1 - mask) * gt)
        validAreaLoss = 2 * self.l1(mask * output, mask * gt)
        GLoss = holeLoss + validAreaLoss + 0.1 * D_fake
        return GLoss.sum()


def train(netG, criterion, G_optimizer, batches):
    for imgs, gt, masks in batches:
        fake_images = netG(imgs)
        G_loss = criterion(imgs, masks, fake_images, gt)
        G_loss = G_loss.sum()
        G_optimizer.zero_grad()
        G_loss.backward()
        G_optimizer.step()


def run():
    torch.manual_seed(0)
    netG = STRnet()
    criterion = LossWithGAN_STE(lr=1e-4)
    G_optimizer = torch.optim.Adam(netG.parameters(), lr=1e-4)
    batches = [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float())]
    train(netG, criterion, G_optimizer, batches)
