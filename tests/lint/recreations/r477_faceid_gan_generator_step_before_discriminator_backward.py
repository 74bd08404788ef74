"""A CVAE-GAN built after FaceID-GAN's training code computes every loss of
the batch first (the classifier's, the encoder-generator's and the
discriminator's, the last on the generator's output `x_rec` taken as it is),
then updates each network in turn: clear, backward, step.  The
discriminator's backward comes after the generator's `opt_G.step()` and runs
through `x_rec`'s graph, which saved the generator's weights: "one of the
variables needed for gradient computation has been modified by an inplace
operation".  The reporter found that backpropagating every loss before any
step removes the error (or `x_rec.detach()` in the discriminator's loss).
Buggy line: `opt_G.step()` before `loss_D.backward()` in `Trainer.update`.
Source: https://github.com/shoutOutYangJie/FaceID-GAN/issues/5"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, d=10, z=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, 2 * z))

    def forward(self, x):
        mu, logvar = self.body(x).chunk(2, dim=1)
        return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar), mu, logvar


class Generator(nn.Module):
    def __init__(self, z=4, n_cls=3, d=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z + n_cls, 16), nn.ReLU(), nn.Linear(16, d), nn.Tanh())

    def forward(self, z, y_onehot):
        return self.net(torch.cat([z, y_onehot], dim=1))


class Classifier(nn.Module):
    def __init__(self, d=10, n_cls=3):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d, 8), nn.ReLU())
        self.head = nn.Linear(8, n_cls)

    def forward(self, x):
        f = self.features(x)
        return self.head(f), f


class Trainer:
    def __init__(self, n_cls=3):
        torch.manual_seed(0)
        self.n_cls = n_cls
        self.E, self.G, self.C = Encoder(), Generator(), Classifier()
        self.D = nn.Sequential(nn.Linear(10, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.opt_E = torch.optim.Adam(self.E.parameters(), lr=1e-4)
        self.opt_G = torch.optim.Adam(self.G.parameters(), lr=1e-4)
        self.opt_C = torch.optim.Adam(self.C.parameters(), lr=1e-4)
        self.opt_D = torch.optim.Adam(self.D.parameters(), lr=1e-4)

    def compute_losses(self, x, y):
        y_onehot = F.one_hot(y, self.n_cls).float()
        z, mu, logvar = self.E(x)
        x_rec = self.G(z, y_onehot)
        logits_real, _ = self.C(x)
        loss_C = F.cross_entropy(logits_real, y)
        d_real, d_fake = self.D(x), self.D(x_rec)
        loss_D = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
            F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        loss_G = F.mse_loss(x_rec, x) + kl + F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
        return loss_C, loss_G, loss_D

    def update(self, x, y):
        loss_C, loss_G, loss_D = self.compute_losses(x, y)
        self.opt_C.zero_grad()
        loss_C.backward(retain_graph=True)
        self.opt_C.step()
        self.opt_E.zero_grad()
        self.opt_G.zero_grad()
        loss_G.backward(retain_graph=True)
        self.opt_E.step()  # expect: ADL003
        self.opt_G.step()  # expect: ADL003
        self.opt_D.zero_grad()
        loss_D.backward()
        self.opt_D.step()


def run():
    trainer = Trainer()
    for _ in range(2):
        trainer.update(torch.randn(4, 10), torch.tensor([0, 1, 2, 1]))
