"""ali-pytorch trains Adversarially Learned Inference: a generator (decoder)
G, an encoder E and a joint discriminator D(x, z).  Both losses come from
one forward pass; `main.py` steps the discriminator between the two
backwards: `loss_d.backward(retain_graph=True); optimizerD.step();
loss_g.backward(); optimizerG.step()`.  The generator/encoder loss runs back
through D, whose weights `optimizerD.step()` has just changed in place:
"RuntimeError: one of the variables needed for gradient computation has been
modified by an inplace operation ... at loss_g.backward()" (the reporter
tried moving `optimizerD.step()`).
Buggy line: `optimizerD.step()` before `loss_g.backward()`.
Source: https://github.com/9310gaurav/ali-pytorch/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, nz=4, nx=6):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 8), nn.LeakyReLU(0.2), nn.Linear(8, nx))

    def forward(self, z):
        return torch.tanh(self.main(z))


class Encoder(nn.Module):
    def __init__(self, nx=6, nz=4):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nx, 8), nn.LeakyReLU(0.2), nn.Linear(8, nz))

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self, nx=6, nz=4):
        super().__init__()
        self.infer_x = nn.Linear(nx, 8)
        self.infer_z = nn.Linear(nz, 8)
        self.infer_joint = nn.Linear(16, 1)

    def forward(self, x, z):
        h = torch.cat([F.leaky_relu(self.infer_x(x), 0.2), F.leaky_relu(self.infer_z(z), 0.2)], 1)
        return torch.sigmoid(self.infer_joint(h))


def train(netG, netE, netD, train_loader, num_epochs=1, nz=4, lr=2e-4):
    optimizerG = torch.optim.Adam(list(netG.parameters()) + list(netE.parameters()), lr=lr, betas=(0.5, 0.999))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(0.5, 0.999))
    criterion = nn.BCELoss()
    for epoch in range(num_epochs):
        for i, x in enumerate(train_loader):
            batch_size = x.size(0)
            z = torch.randn(batch_size, nz)
            x_tilde = netG(z)
            z_hat = netE(x)
            noise1 = torch.randn_like(x) * 0.1
            noise2 = torch.randn_like(x) * 0.1
            output_real = netD(x + noise1, z_hat)
            output_fake = netD(x_tilde + noise2, z)
            ones = torch.ones(batch_size, 1)
            zeros = torch.zeros(batch_size, 1)
            loss_d = criterion(output_real, ones) + criterion(output_fake, zeros)
            loss_g = criterion(output_fake, ones) + criterion(output_real, zeros)
            optimizerD.zero_grad()
            loss_d.backward(retain_graph=True)
            optimizerD.step()  # expect: ADL003
            optimizerG.zero_grad()
            loss_g.backward()
            optimizerG.step()


def run():
    torch.manual_seed(0)
    train(Generator(), Encoder(), Discriminator(), [torch.randn(4, 6) for _ in range(2)])
