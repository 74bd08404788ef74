"""Video prediction GAN: the generator's adversarial loss is computed, then the discriminator is
trained and stepped, then the generator's loss, which goes through the discriminator, is
backpropagated through the discriminator weights that step changed in place.
Source: https://github.com/psh01087/Vid-ODE/issues/6 (answer: swap the order, train G first, then D).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer_netG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optimizer_netD = torch.optim.Adam(netD.parameters(), lr=1e-3)
past, future = torch.randn(5, 4), torch.randn(5, 8)

predicted = netG(past)
real_label, fake_label = torch.ones(5, 1), torch.zeros(5, 1)
loss_netG = F.binary_cross_entropy_with_logits(netD(predicted), real_label) + F.l1_loss(predicted, future)
loss_netD = (F.binary_cross_entropy_with_logits(netD(future), real_label)
             + F.binary_cross_entropy_with_logits(netD(predicted.detach()), fake_label))

# Train D
optimizer_netD.zero_grad()
loss_netD.backward()
optimizer_netD.step()

# Train G
optimizer_netG.zero_grad()
loss_netG.backward()
optimizer_netG.step()
result = {"losses": [loss_netG.detach(), loss_netD.detach()],
          "params": [p.detach() for p in [*netG.parameters(), *netD.parameters()]]}
