# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 23
# trigger: a GAN's discriminator wraps its linear layers in the legacy torch.nn.utils.spectral_norm; the
#   generator step freezes the discriminator with a set_requires_grad helper that walks
#   discriminator.modules() and sets module.weight.requires_grad on every nn.Linear, after the
#   discriminator step already ran a forward (the weight is then computed by the hook)
# source: none found; the pattern as users write it
# results: generator[0].weight, discriminator[0].weight_orig, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def set_requires_grad(net, flag):
    for module in net.modules():
        if isinstance(module, nn.Linear):
            module.weight.requires_grad = flag  # PRIMARY
            module.bias.requires_grad = flag


torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
discriminator = nn.Sequential(nn.utils.spectral_norm(nn.Linear(4, 6)), nn.LeakyReLU(0.2),
                              nn.utils.spectral_norm(nn.Linear(6, 1)))
opt_g = torch.optim.SGD(generator.parameters(), lr=0.1)
opt_d = torch.optim.SGD(discriminator.parameters(), lr=0.1)
losses = []
for step in range(3):
    real = torch.randn(5, 4) + 0.5
    fake = generator(torch.randn(5, 3))
    set_requires_grad(discriminator, True)
    d_loss = nn.functional.softplus(discriminator(fake.detach())).mean() + nn.functional.softplus(-discriminator(real)).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    set_requires_grad(discriminator, False)
    g_loss = nn.functional.softplus(-discriminator(fake)).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    losses.append((d_loss.detach(), g_loss.detach()))
