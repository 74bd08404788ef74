"""lightweight-gan trained with the differentiable `offset` augmentation: `rand_offset` shifts each
image of the batch by writing the rolled image back into the batch, `x[image_index] =
torch.roll(x[image_index], value_h, 2)`. In the generator's step the batch is the generator's own
output, a `tanh` that autograd saved for its backward, so the generator's loss.backward() raises
"one of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [4, 192]], which is output 0 of Tanh, is at version 6; expected version 0
instead".
Source: https://github.com/lucidrains/lightweight-gan/pull/33 ("fix inplace operation being used in
rand offset", merged); the correct version rolls each image out of place and stacks them, as the
library's `rand_offset` does now.
expect: raises"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)

LATENT, IMAGE = 8, 8


def rand_offset(x, ratio=1, ratio_h=1, ratio_v=1):
    w, h = x.size(2), x.size(3)
    for image_index in range(x.size(0)):
        max_h = int(w * ratio * ratio_h)
        max_v = int(h * ratio * ratio_v)
        value_h = random.randint(0, max_h) * 2 - max_h
        value_v = random.randint(0, max_v) * 2 - max_v
        if abs(value_h) > 0:
            x[image_index] = torch.roll(x[image_index], value_h, 2)
        if abs(value_v) > 0:
            x[image_index] = torch.roll(x[image_index], value_v, 1)
    return x


def DiffAugment(x, types=()):
    for p in types:
        for f in AUGMENT_FNS[p]:
            x = f(x)
    return x.contiguous()


AUGMENT_FNS = {'offset': [rand_offset]}


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LATENT, 3 * IMAGE * IMAGE), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 3, IMAGE, IMAGE)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Flatten(), nn.Linear(8 * (IMAGE // 2) ** 2, 1))

    def forward(self, x):
        return self.net(x)


G, D = Generator(), Discriminator()
G_opt = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.9))
D_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.9))
real_images = torch.rand(4, 3, IMAGE, IMAGE) * 2 - 1
aug_types = ['offset']

d_losses, g_losses = [], []
for step in range(2):
    # Discriminator step (hinge loss), fakes detached.
    generated = G(torch.randn(4, LATENT)).detach()
    fake_output = D(DiffAugment(generated, aug_types))
    real_output = D(DiffAugment(real_images.clone(), aug_types))
    d_loss = F.relu(1 + real_output).mean() + F.relu(1 - fake_output).mean()
    D_opt.zero_grad()
    d_loss.backward()
    D_opt.step()

    # Generator step.
    generated = G(torch.randn(4, LATENT))
    g_loss = D(DiffAugment(generated, aug_types)).mean()
    G_opt.zero_grad()
    g_loss.backward()
    G_opt.step()
    d_losses.append(d_loss.detach())
    g_losses.append(g_loss.detach())

result = {"d_losses": d_losses, "g_losses": g_losses,
          "params": [p.detach().clone() for p in list(G.parameters()) + list(D.parameters())]}
