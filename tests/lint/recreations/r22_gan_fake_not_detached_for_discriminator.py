"""DCGAN without `fake.detach()` in the discriminator's loss: its backward
frees the generator's graph, which the generator's backward needs next
("Trying to backward through the graph a second time").
Source: https://github.com/pytorch/examples/issues/116"""
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
netD = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters())
optimizerG = torch.optim.Adam(netG.parameters())


def run():
    real = torch.randn(6, 4)
    ones, zeros = torch.ones(6, 1), torch.zeros(6, 1)
    fake = netG(torch.randn(6, 2))
    errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
    netD.zero_grad()
    errD.backward()
    optimizerD.step()
    netG.zero_grad()
    errG = criterion(netD(fake), ones)
    errG.backward()  # expect: ADL019
    optimizerG.step()
