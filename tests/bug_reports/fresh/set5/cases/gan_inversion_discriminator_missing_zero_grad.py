"""In-domain GAN inversion: an encoder is trained to invert a fixed generator, with a discriminator
on the reconstructions; the discriminator's update never calls `optimizer_D.zero_grad()`, so its
gradients add up across iterations and also collect the encoder step's adversarial gradients
(no error).
Source: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1 ("Is the
optimizer_D.zero_grad() missing before the backward() step in training_loop_encoder.py?";
maintainer: "You're right. Sorry I forgot to add it. I have fixed it.").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 10))
for p in generator.parameters():
    p.requires_grad_(False)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
discriminator = nn.Sequential(nn.Linear(10, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer_E = torch.optim.Adam(encoder.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
reals = [generator(torch.randn(6, 4)) for _ in range(4)]

losses = []
for x in reals:
    x_rec = generator(encoder(x))
    loss_D = F.softplus(discriminator(x_rec.detach())).mean() + F.softplus(-discriminator(x)).mean()
    loss_D.backward()
    optimizer_D.step()

    optimizer_E.zero_grad()
    loss_E = F.mse_loss(x_rec, x) + 0.1 * F.softplus(-discriminator(x_rec)).mean()
    loss_E.backward()
    optimizer_E.step()
    losses.append((loss_D.detach(), loss_E.detach()))
result = {"losses": losses, "E": [p.detach() for p in encoder.parameters()], "D": [p.detach() for p in discriminator.parameters()]}
