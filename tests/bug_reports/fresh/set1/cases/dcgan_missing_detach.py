"""DCGAN without `.detach()` on the fake batch for the discriminator's loss: its backward frees
the generator's graph, and the generator's backward then fails.
Source: https://github.com/pytorch/examples/issues/116 (comment: "Missed detach ... gives me this
error"; fix: `netD(fake.detach())`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(3, 5), nn.Tanh())
netD = nn.Sequential(nn.Linear(5, 1), nn.Sigmoid())
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
optG = torch.optim.SGD(netG.parameters(), lr=0.1)
criterion = nn.BCELoss()
real = torch.randn(4, 5)
noise = torch.randn(4, 3)
ones, zeros = torch.ones(4, 1), torch.zeros(4, 1)

netD.zero_grad()
errD_real = criterion(netD(real), ones)
errD_real.backward()
fake = netG(noise)
output = netD(fake)
errD_fake = criterion(output, zeros)
errD_fake.backward()
optD.step()

netG.zero_grad()
output = netD(fake)
errG = criterion(output, ones)
errG.backward()
optG.step()
result = {"errD": errD_fake.detach(), "errG": errG.detach(),
          "G": [p.detach() for p in netG.parameters()], "D": [p.detach() for p in netD.parameters()]}
