# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001
# code: AD303 (catalogue: deepcopy_weight_norm)
# set: 9
# trigger: a GAN discriminator uses the legacy torch.nn.utils.spectral_norm; after a training step
#   the trainer deep-copies it to keep an averaged copy, and the weight the hook computed (with grad
#   history) is a plain attribute of the module
# source: none found; the pattern as users write it (EMA copies of spectrally normalised GANs)
# results: losses, discriminator, average
import copy

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
discriminator = nn.Sequential(nn.utils.spectral_norm(nn.Linear(3, 4)), nn.LeakyReLU(0.2), nn.Linear(4, 1))  # PRIMARY
optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)
real, fake = torch.randn(6, 3) + 1, torch.randn(6, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.softplus(-discriminator(real)).mean() + F.softplus(discriminator(fake)).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
average = copy.deepcopy(discriminator)
