"""FactorVAE loss object: its `__call__` backpropagates the VAE loss and steps
the model's optimizer, then builds the discriminator's total-correlation loss
from `d_z`, which the discriminator computed from the stepped encoder's output
("modified by an inplace operation" at `d_tc_loss.backward()`).
Source: https://github.com/YannDubs/disentangling-vae/issues/62"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class Encoder(nn.Module):
    def __init__(self, in_dim=12, latent_dim=4):
        super().__init__()
        self.lin = nn.Linear(in_dim, 16)
        self.mu = nn.Linear(16, latent_dim)

    def forward(self, x):
        return self.mu(F.relu(self.lin(x)))


class Decoder(nn.Module):
    def __init__(self, latent_dim=4, out_dim=12):
        super().__init__()
        self.lin = nn.Linear(latent_dim, 16)
        self.out = nn.Linear(16, out_dim)

    def forward(self, z):
        return self.out(F.relu(self.lin(z)))


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def sample_latent(self, x):
        return self.encoder(x)

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z


class Discriminator(nn.Module):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.lin1 = nn.Linear(latent_dim, 16)
        self.lin2 = nn.Linear(16, 2)

    def forward(self, z):
        return self.lin2(F.leaky_relu(self.lin1(z), 0.2))


def permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size)
        perm[:, z] = latent_sample[pi, z]
    return perm


class FactorKLoss:
    def __init__(self, device, gamma=10.0):
        self.gamma = gamma
        self.discriminator = Discriminator()
        self.optimizer_d = optim.Adam(self.discriminator.parameters(), lr=5e-5)

    def __call__(self, data, model, optimizer):
        batch_size = data.size(0)
        half_batch_size = batch_size // 2
        data = data.split(half_batch_size)
        data1, data2 = data[0], data[1]

        recon_batch, latent_sample1 = model(data1)
        rec_loss = F.mse_loss(recon_batch, data1)
        d_z = self.discriminator(latent_sample1)
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + self.gamma * tc_loss

        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003

        latent_sample2 = model.sample_latent(data2)
        z_perm = permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        ones = torch.ones(half_batch_size, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))

        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()
        return vae_loss


def run():
    torch.manual_seed(0)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    loss_f = FactorKLoss("cpu")
    loss_f(torch.randn(8, 12), model, optimizer)
