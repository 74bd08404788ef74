"""BiGAN trainer: the discriminator scores (image, code) pairs from the
encoder and from the generator; both losses come from the same two
discriminator outputs.  The trainer backpropagates the discriminator's loss
with `retain_graph=True`, steps the discriminator's optimizer, then
backpropagates the generator-encoder loss through the same outputs: the step
has modified the discriminator's weights that those outputs' graph saved,
and `loss_ge.backward()` fails ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The fix computes
both backward passes before either step, or recomputes the discriminator's
outputs after its step.
Buggy line: `optimizer_d.step()` between `loss_d.backward(retain_graph=True)`
and `loss_ge.backward()` in `TrainerBiGAN.train`.
Expected finding: ADL003 there.
Source: https://github.com/mperezcarrasco/PyTorch-BiGAN/issues/1"""
import torch
import torch.nn as nn
from torch import optim


class Generator(nn.Module):
    def __init__(self, latent_dim):
        super().__init__()
        self.output = nn.Sequential(nn.Linear(latent_dim, 16), nn.LeakyReLU(0.1), nn.Linear(16, 12), nn.Tanh())

    def forward(self, z):
        return self.output(z)


class Encoder(nn.Module):
    def __init__(self, latent_dim):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.1), nn.Linear(16, latent_dim))

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self, latent_dim):
        super().__init__()
        self.infer_x = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.1))
        self.infer_z = nn.Sequential(nn.Linear(latent_dim, 16), nn.LeakyReLU(0.1))
        self.infer_joint = nn.Sequential(nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x, z):
        return self.infer_joint(torch.cat((self.infer_x(x), self.infer_z(z)), dim=1))


class TrainerBiGAN:
    def __init__(self, args, data):
        self.args = args
        self.train_loader = data

    def train(self):
        self.G = Generator(self.args["latent_dim"])
        self.E = Encoder(self.args["latent_dim"])
        self.D = Discriminator(self.args["latent_dim"])
        optimizer_ge = optim.Adam(list(self.G.parameters()) + list(self.E.parameters()), lr=1e-4)
        optimizer_d = optim.Adam(self.D.parameters(), lr=1e-4)
        criterion = nn.BCELoss()
        for epoch in range(self.args["num_epochs"]):
            for x, _ in self.train_loader:
                y_true = torch.ones((x.size(0), 1))
                y_fake = torch.zeros((x.size(0), 1))
                noise1 = torch.randn(x.size()) * 0.1
                noise2 = torch.randn(x.size()) * 0.1

                optimizer_d.zero_grad()
                optimizer_ge.zero_grad()

                z_fake = torch.randn((x.size(0), self.args["latent_dim"]))
                x_fake = self.G(z_fake)

                x_true = x.float()
                z_true = self.E(x_true)

                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)

                loss_d = criterion(out_true, y_true) + criterion(out_fake, y_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)

                loss_d.backward(retain_graph=True)
                optimizer_d.step()  # expect: ADL003

                loss_ge.backward()
                optimizer_ge.step()


def run():
    torch.manual_seed(0)
    data = [(torch.rand(4, 12) * 2 - 1, torch.zeros(4))]
    TrainerBiGAN({"latent_dim": 3, "num_epochs": 1}, data).train()
