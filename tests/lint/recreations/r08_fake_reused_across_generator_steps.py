"""SinGAN: `fake` is generated once; every generator step in the loop
backpropagates through it again, after the previous step changed G.
Source: https://github.com/tamarott/SinGAN/issues/148"""
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
netD = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizerG = torch.optim.Adam(netG.parameters())


def run(g_steps=3):
    fake = netG(torch.randn(5, 4))
    for _ in range(g_steps):
        netG.zero_grad()
        err_g = -netD(fake).mean()
        err_g.backward(retain_graph=True)
        optimizerG.step()  # expect: ADL003
