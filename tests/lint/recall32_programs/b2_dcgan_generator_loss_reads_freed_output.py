"""The near twin of ok4 that is wrong: the generator's loss reads the
discriminator's output itself (not a constant made from it), whose graph the
discriminator's backward freed."""
import torch
import torch.nn as nn


def train(netG, netD, optD, optG, batches, nz=4):
    criterion = nn.BCELoss()
    for real in batches:
        netD.zero_grad()
        output = netD(real).view(-1)
        label = torch.full_like(output, 1.0)
        errD_real = criterion(output, label)
        errD_real.backward()
        noise = torch.randn(real.size(0), nz)
        fake = netG(noise)
        errD_fake = criterion(netD(fake.detach()).view(-1), output.new_zeros(output.shape))
        errD_fake.backward()
        optD.step()

        netG.zero_grad()
        errG = criterion(netD(fake).view(-1), label) + (1 - output).mean()
        errG.backward()
        optG.step()


def run():
    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    netD = nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
    train(netG, netD, optD, optG, [torch.randn(5, 3) for _ in range(2)])
