# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 20
# trigger: fine-tuning a GAN discriminator whose layers went through
#   torch.nn.utils.parametrizations.spectral_norm: the first layer is frozen with
#   layer.weight.requires_grad = False, but weight is computed by the parametrisation at each access
# source: none found; the pattern as users write it (freezing layers by their weight attribute)
# results: disc, losses
import os
import sys

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def build_discriminator():
    return nn.Sequential(spectral_norm(nn.Linear(4, 8)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(8, 1)))


def freeze_first_layer(disc):
    disc[0].parametrizations.weight.original.requires_grad = False  # PRIMARY
    disc[0].bias.requires_grad = False


torch.manual_seed(0)
disc = build_discriminator()
freeze_first_layer(disc)
optimizer = torch.optim.SGD([p for p in disc.parameters() if p.requires_grad], lr=0.1)
losses = []
for _ in range(3):
    real, fake = torch.randn(8, 4) + 1, torch.randn(8, 4)
    loss = nn.functional.softplus(-disc(real)).mean() + nn.functional.softplus(disc(fake)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
