"""Wasserstein auto-encoder (WAE-MMD): the RBF kernel of the MMD penalty
accumulates the two within-sample kernel matrices in place,
`res1 = torch.exp(-C * dists_x); res1 += torch.exp(-C * dists_y)`.  `exp`
keeps its output for backward, so training with the RBF kernel fails at
`total_loss.backward()` ("one of the variables needed for gradient
computation has been modified by an inplace operation"); the inverse
multiquadratic kernel next to it does the same `+=` on a division result,
which keeps nothing, and trains.
Buggy line: `res1 += torch.exp(-C * dists_y)` in `rbf_kernel`.
Expected finding: ADL001 there.
Source: https://github.com/schelotto/Wasserstein-AutoEncoders/blob/0588d4ea9268013bfc72038678d53494cb0ef34c/wae_mmd.py"""
import torch
import torch.nn as nn
import torch.optim as optim


class Encoder(nn.Module):
    def __init__(self, n_in=12, n_z=2):
        super(Encoder, self).__init__()
        self.n_z = n_z
        self.main = nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(True), nn.Linear(16, n_z))

    def forward(self, x):
        return self.main(x)


class Decoder(nn.Module):
    def __init__(self, n_out=12, n_z=2):
        super(Decoder, self).__init__()
        self.main = nn.Sequential(nn.Linear(n_z, 16), nn.ReLU(True), nn.Linear(16, n_out), nn.Sigmoid())

    def forward(self, z):
        return self.main(z)


def rbf_kernel(X: torch.Tensor, Y: torch.Tensor, h_dim: int):
    batch_size = X.size(0)

    norms_x = X.pow(2).sum(1, keepdim=True)
    prods_x = torch.mm(X, X.t())
    dists_x = norms_x + norms_x.t() - 2 * prods_x

    norms_y = Y.pow(2).sum(1, keepdim=True)
    prods_y = torch.mm(Y, Y.t())
    dists_y = norms_y + norms_y.t() - 2 * prods_y

    dot_prd = torch.mm(X, Y.t())
    dists_c = norms_x + norms_y.t() - 2 * dot_prd

    stats = 0
    for scale in [.1, .2, .5, 1., 2., 5., 10.]:
        C = 2 * h_dim * 1.0 / scale
        res1 = torch.exp(-C * dists_x)
        res1 += torch.exp(-C * dists_y)  # expect: ADL001
        res1 = (1 - torch.eye(batch_size)) * res1
        res1 = res1.sum() / (batch_size - 1)
        res2 = torch.exp(-C * dists_c)
        res2 = res2.sum() * 2. / batch_size
        stats += res1 - res2

    return stats


def train(train_loader, n_z=2, sigma=1.0, epochs=1):
    encoder, decoder = Encoder(n_z=n_z), Decoder(n_z=n_z)
    criterion = nn.MSELoss()
    enc_optim = optim.Adam(encoder.parameters(), lr=1e-3)
    dec_optim = optim.Adam(decoder.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for images in train_loader:
            enc_optim.zero_grad()
            dec_optim.zero_grad()
            batch_size = images.size()[0]
            z = encoder(images)
            x_recon = decoder(z)
            recon_loss = criterion(x_recon, images)
            z_fake = torch.randn(batch_size, n_z) * sigma
            mmd_loss = rbf_kernel(z, z_fake, h_dim=encoder.n_z) / batch_size
            total_loss = recon_loss + mmd_loss
            total_loss.backward()
            enc_optim.step()
            dec_optim.step()


def run():
    torch.manual_seed(0)
    train([torch.rand(4, 12)])
