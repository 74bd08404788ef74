"""Training a Wasserstein GAN with weight clipping (martinarjovsky/WassersteinGAN, `main.py`): in
each critic iteration the critic's parameters are clamped to [-c, c] *before* the critic's
forward, backward and `optimizerD.step()`. The last critic step therefore leaves weights outside
the box, and the generator is trained against that unclipped critic; the Lipschitz constraint the
paper's algorithm enforces after every update holds one step late. No error. The fix suggested on
the issue (the paper's Algorithm 1): clamp right after `optimizerD.step()`.
Source: https://github.com/martinarjovsky/WassersteinGAN/issues/50
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

LATENT, IMG, CLAMP, N_CRITIC = 4, 8, 0.05, 3

netG = nn.Sequential(nn.Linear(LATENT, 16), nn.ReLU(), nn.Linear(16, IMG), nn.Tanh())
netD = nn.Sequential(nn.Linear(IMG, 16), nn.ReLU(), nn.Linear(16, 1))
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-3)
optimizerG = torch.optim.RMSprop(netG.parameters(), lr=5e-3)
real_data = torch.rand(32, IMG) * 2 - 1

g_losses = []
for gen_iteration in range(3):
    for p in netD.parameters():
        p.requires_grad = True
    for d_iter in range(N_CRITIC):
        netD.zero_grad()
        real = real_data[torch.randint(0, 32, (8,))]
        errD_real = netD(real).mean()
        fake = netG(torch.randn(8, LATENT)).detach()
        errD_fake = netD(fake).mean()
        errD = errD_fake - errD_real
        errD.backward()
        optimizerD.step()
        for p in netD.parameters():
            p.data.clamp_(-CLAMP, CLAMP)

    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    errG = -netD(netG(torch.randn(8, LATENT))).mean()
    errG.backward()
    optimizerG.step()
    g_losses.append(errG.detach())
for p in netD.parameters():
    p.requires_grad = True  # as the next generator iteration would, before its critic steps

result = {"g_losses": torch.stack(g_losses),
          "params": [p.detach().clone() for p in list(netG.parameters()) + list(netD.parameters())]}
