"""CVAE-GAN-zoos' VAE-GAN script trains the discriminator, then the VAE twice
per batch: once on its reconstruction and KL loss (`vae_loss1`, backpropagated
with `retain_graph=True` and stepped), then on the adversarial loss of the
same reconstruction `recon_data` fed to the discriminator (`errVAE`).  The
second backward runs through the decoder's graph of `recon_data`, whose
weights the first `optimizerVAE.step()` has just changed in place: on
PyTorch >= 1.5 `errVAE.backward()` raises "one of the variables needed for
gradient computation has been modified by an inplace operation".  The fix
sums both VAE losses and steps once (or recomputes `recon_data` after the
first step).
Buggy line: the first `optimizerVAE.step()` of the batch.
Source: https://github.com/YixinChen-AI/CVAE-GAN-zoos-PyTorch-Beginner/issues/10
(the pull request that fixes it: .../pull/11)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d=12, z=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d, 16), nn.ReLU())
        self.mu = nn.Linear(16, z)
        self.logvar = nn.Linear(16, z)
        self.decoder = nn.Sequential(nn.Linear(z, 16), nn.ReLU(), nn.Linear(16, d), nn.Sigmoid())

    def reparameterize(self, mu, logvar):
        return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.logvar(h)
        return self.decoder(self.reparameterize(mu, logvar)), mu, logvar


class Discriminator(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.dis = nn.Sequential(nn.Linear(d, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.dis(x).squeeze(1)


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def train(dataloader, epochs=1):
    torch.manual_seed(0)
    vae, D = VAE(), Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(D.parameters(), lr=1e-4)
    optimizerVAE = torch.optim.Adam(vae.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for data in dataloader:
            batch_size = data.size(0)
            real_label = torch.ones(batch_size)
            fake_label = torch.zeros(batch_size)
            # update D
            output = D(data)
            errD_real = criterion(output, real_label)
            recon_data, mu, logvar = vae(data)
            output = D(recon_data.detach())
            errD_fake = criterion(output, fake_label)
            errD = errD_real + errD_fake
            optimizerD.zero_grad()
            errD.backward()
            optimizerD.step()
            # update VAE (1): reconstruction and KL
            vae_loss1 = loss_function(recon_data, data, mu, logvar)
            optimizerVAE.zero_grad()
            vae_loss1.backward(retain_graph=True)
            optimizerVAE.step()  # expect: ADL003
            # update VAE (2): fool the discriminator
            output = D(recon_data)
            errVAE = criterion(output, real_label)
            optimizerVAE.zero_grad()
            errVAE.backward()
            optimizerVAE.step()


def run():
    train([torch.rand(4, 12) for _ in range(2)])
