"""A GAN whose generator uses spectral normalisation and is updated twice per batch by two
optimizers, a content step and then an adversarial step, from one generator output kept with
retain_graph=True "not to perform forward of generator second time". With plain layers the second
backward() runs (a linear layer of an input that needs no gradient keeps only that input), but
spectral_norm computes weight = weight_orig / sigma, and the division keeps weight_orig: the
content step's optimizer.step() changes it in place, and the adversarial backward() fails
("... [torch.FloatTensor [5, 2]] is at version 2; expected version 1 instead"). The answer on the
issue: the output of the old weights cannot be differentiated again after the step; run the
generator again for the second update.
Source: https://github.com/pytorch/pytorch/issues/55368 ("Backprop second time on spectral_norm").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm

torch.manual_seed(0)

LATENT, DATA, BATCH = 2, 5, 7

generator = nn.Sequential(spectral_norm(nn.Linear(LATENT, DATA)))
discriminator = nn.Sequential(nn.Linear(DATA, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_content = torch.optim.SGD(generator.parameters(), lr=1e-2)
opt_adversarial = torch.optim.SGD(generator.parameters(), lr=1e-2)
opt_d = torch.optim.SGD(discriminator.parameters(), lr=1e-2)

real = torch.randn(BATCH, DATA)
losses = []
for step in range(3):
    z = torch.randn(BATCH, LATENT)
    fake = generator(z)

    d_loss = F.softplus(-discriminator(real)).mean() + F.softplus(discriminator(fake.detach())).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    content_loss = (fake - real).abs().mean()
    opt_content.zero_grad()
    content_loss.backward()
    opt_content.step()

    fake = generator(z)
    adversarial_loss = F.softplus(-discriminator(fake)).mean()
    opt_adversarial.zero_grad()
    adversarial_loss.backward()
    opt_adversarial.step()
    losses.append(torch.stack([d_loss.detach(), content_loss.detach(), adversarial_loss.detach()]))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in generator.parameters()]}
