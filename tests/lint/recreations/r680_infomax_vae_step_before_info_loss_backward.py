"""InfoMax-VAE (AliLotfi92/InfoMaxVAE), issue 1: running `infoMaxVAE.py` fails at
`info_loss.backward()` with "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.cuda.FloatTensor [1000, 4]], which is output 0 of
TBackward, is at version 2; expected version 1".  Per batch the script encodes the images,
scores the pairs (x, z) and (x, shuffled z) with a critic `D` for the mutual-information term
`Info_xz`, backpropagates the VAE's loss (reconstruction + KL + gamma * Info_xz) with
`retain_graph=True` and steps the VAE's optimizer; then it backpropagates `info_loss = Info_xz`
(the critic's objective) through the same forward, whose path to the critic's input `z` runs
through the encoder's last `Linear(1000, 2 * z_dim)` weight (transposed: `[1000, 4]`) that the
step has just changed.  The author's fix (in the newer PyTorch the check is enforced) moved
both backwards before both steps.
Re-created with the script's modules, its loss helpers and its loop in a `train` function;
smaller layers on random images in place of MNIST.
Buggy line: `optim_VAE.step()` before `info_loss.backward()`.
Source: https://github.com/AliLotfi92/InfoMaxVAE/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Discriminator(nn.Module):
    def __init__(self, x_dim=64, z_dim=2):
        super().__init__()
        self.x_dim = x_dim
        self.net = nn.Sequential(
            nn.Linear(x_dim + z_dim, 32), nn.ReLU(True),
            nn.Linear(32, 16), nn.ReLU(True),
            nn.Linear(16, 1),
        )

    def forward(self, x, z):
        x = x.view(-1, self.x_dim)
        x = torch.cat((x, z), 1)
        return self.net(x).squeeze()


class VAE1(nn.Module):
    def __init__(self, x_dim=64, z_dim=2):
        super().__init__()
        self.x_dim = x_dim
        self.z_dim = z_dim
        self.encode = nn.Sequential(
            nn.Linear(x_dim, 32), nn.ReLU(True),
            nn.Linear(32, 2 * z_dim),
        )
        self.decode = nn.Sequential(
            nn.Linear(z_dim, 32), nn.ReLU(True),
            nn.Linear(32, x_dim), nn.Sigmoid(),
        )

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp()
        eps = torch.randn_like(std)
        return eps.mul(std).add(mu)

    def forward(self, x):
        stats = self.encode(x.view(-1, self.x_dim))
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)
        x_recon = self.decode(z).view(x.size())
        return x_recon, mu, logvar, z.squeeze()


def recon_loss(x_recon, x):
    n = x.size(0)
    return F.binary_cross_entropy(x_recon, x, reduction='sum').div(n)


def kl_divergence(mu, logvar):
    return -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()


def permute_dims(z):
    assert z.dim() == 2
    B, _ = z.size()
    perm = torch.randperm(B)
    return z[perm]


def train(data_loader, max_iter=1, gamma=10):
    VAE = VAE1()
    D = Discriminator()
    optim_VAE = optim.Adam(VAE.parameters(), lr=1e-4, betas=(0.9, 0.999))
    optim_D = optim.Adam(D.parameters(), lr=1e-5, betas=(0.9, 0.999))

    result = []
    for epoch in range(max_iter):
        train_loss = 0
        train_info_loss = 0
        for batch_idx, (x_true, _) in enumerate(data_loader):
            x_recon, mu, logvar, z = VAE(x_true)

            D_xz = D(x_true, z)
            z_perm = permute_dims(z)
            D_x_z = D(x_true, z_perm)

            Info_xz = -(D_xz.mean() - (torch.exp(D_x_z - 1).mean()))

            vae_recon_loss = recon_loss(x_recon, x_true)
            vae_kld = kl_divergence(mu, logvar)
            vae_loss = vae_recon_loss + vae_kld + gamma * Info_xz

            optim_VAE.zero_grad()
            vae_loss.backward(retain_graph=True)
            optim_VAE.step()  # expect: ADL003

            info_loss = Info_xz
            train_loss += vae_loss.item()
            train_info_loss += -info_loss.item()

            optim_D.zero_grad()
            info_loss.backward()
            optim_D.step()
        result.append((epoch, train_loss / (batch_idx + 1), train_info_loss / (batch_idx + 1)))
    return result


def run():
    torch.manual_seed(0)
    data_loader = [(torch.rand(8, 1, 8, 8), torch.zeros(8)) for _ in range(2)]
    return train(data_loader)


if __name__ == "__main__":
    run()
