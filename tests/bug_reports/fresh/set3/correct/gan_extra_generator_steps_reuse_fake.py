"""A GAN that makes several generator updates per discriminator update: the discriminator's step
reuses the fake batch from the last generator update, whose graph that update's backward already
freed ("Trying to backward through the graph a second time").
Source: https://pytroubles.com/ru/posts/id2658-gan-v-pytorch-ispravljaem-oshibku-backward-cherez-detach
(fix: feed the discriminator `fake_batch.detach()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 10), nn.Tanh())
netD = nn.Sequential(nn.Linear(10, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
bce_loss = nn.BCELoss()
real_batch = torch.rand(6, 10) * 2 - 1
g_update_factor = 2

for _ in range(g_update_factor):
    z = torch.randn(6, 4)
    fake_batch = netG(z)
    gen_scores = netD(fake_batch).view(-1)
    g_loss = bce_loss(gen_scores, torch.ones_like(gen_scores))
    optG.zero_grad()
    g_loss.backward()
    optG.step()

real_scores = netD(real_batch).view(-1)
fake_scores = netD(fake_batch.detach()).view(-1)
d_loss = bce_loss(real_scores, torch.ones_like(real_scores)) + bce_loss(fake_scores, torch.zeros_like(fake_scores))
optD.zero_grad()
d_loss.backward()
optD.step()
result = {"losses": [g_loss.detach(), d_loss.detach()],
          "params": [p.detach() for p in [*netG.parameters(), *netD.parameters()]]}
