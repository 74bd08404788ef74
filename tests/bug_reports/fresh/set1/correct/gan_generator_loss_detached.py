"""Change-detection GAN: the generator's adversarial loss is computed on `pred_fake.detach()`, so
it trains nothing; only the reconstruction term reaches the generator (no error).
Source: https://github.com/wangle53/CSA-CDGAN/issues/5 (fix: no detach in the generator's loss).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
netD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
optG = torch.optim.SGD(netG.parameters(), lr=0.1)
bce, l1 = nn.BCELoss(), nn.L1Loss()
x = torch.randn(6, 4)
target = torch.randn(6, 4)

optG.zero_grad()
fake = netG(x)
pred_fake = netD(fake)
err_g_adv = bce(pred_fake, torch.ones(6, 1))
err_g_con = l1(fake, target)
err_g = err_g_adv + 50 * err_g_con
err_g.backward()
optG.step()
result = {"err_g": err_g.detach(), "G": [p.detach() for p in netG.parameters()]}
