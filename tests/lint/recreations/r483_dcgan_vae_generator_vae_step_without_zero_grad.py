"""dcgan_vae_pytorch's main loop updates the discriminator (on real images
and on the VAE's decoded noise, not detached), then the VAE-generator twice:
first on its VAE loss (`VAEerr = MSE + KLD`), then adversarially.  Before the
VAE-loss backward it never calls `netG.zero_grad()`, so `optimizerG.step()`
applies the VAE loss's gradient plus what is left in `netG`'s `.grad` (the
discriminator's fake-batch backward reached the decoder).  Nothing raises;
the maintainer agreed it is a mistake.
Buggy line: `VAEerr.backward()` with no `netG.zero_grad()` before it.
Source: https://github.com/seangal/dcgan_vae_pytorch/issues/4"""
import torch
import torch.nn as nn


class VAEGenerator(nn.Module):
    def __init__(self, d=8, nz=3):
        super().__init__()
        self.nz = nz
        self.encoder = nn.Sequential(nn.Linear(d, 12), nn.ReLU(), nn.Linear(12, 2 * nz))
        self.decoder = nn.Sequential(nn.Linear(nz, 12), nn.ReLU(), nn.Linear(12, d), nn.Tanh())

    def sampler(self, mu, logvar):
        return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        return self.decoder(self.sampler(mu, logvar)), mu, logvar


def train_epoch(netG, netD, optimizerG, optimizerD, dataloader, record=None):
    criterion, MSECriterion = nn.BCELoss(), nn.MSELoss()
    for input in dataloader:
        n = input.size(0)
        label_real, label_fake = torch.ones(n, 1), torch.zeros(n, 1)
        # (1) Update D network
        netD.zero_grad()
        errD_real = criterion(netD(input), label_real)
        errD_real.backward()
        noise = torch.randn(n, netG.nz)
        gen = netG.decoder(noise)
        errD_fake = criterion(netD(gen), label_fake)
        errD_fake.backward()
        optimizerD.step()
        # (2) Update G network: VAE
        rec, mu, logvar = netG(input)
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        VAEerr = KLD + MSECriterion(rec, input)
        if record is not None:  # what netG's .grad holds before the VAE loss's backward
            record.append(netG.decoder[0].weight.grad.clone())
        VAEerr.backward()  # missed: ADL018
        optimizerG.step()
        # (3) Update G network: maximize log(D(G(z)))
        netG.zero_grad()
        errG = criterion(netD(netG.decoder(torch.randn(n, netG.nz))), label_real)
        errG.backward()
        optimizerG.step()


def bug_shows():
    """netG's .grad is not empty when the VAE loss's gradient is added to it."""
    torch.manual_seed(0)
    netG = VAEGenerator()
    netD = nn.Sequential(nn.Linear(8, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1), nn.Sigmoid())
    optG = torch.optim.Adam(netG.parameters(), lr=0.0)
    optD = torch.optim.Adam(netD.parameters(), lr=0.0)
    record = []
    torch.manual_seed(1)
    batch = torch.randn(4, 8)
    train_epoch(netG, netD, optG, optD, [batch], record)
    return record[0].abs().sum().item() > 0
