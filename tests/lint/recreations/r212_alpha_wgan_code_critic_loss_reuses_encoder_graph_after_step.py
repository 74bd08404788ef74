"""Alpha-WGAN for 3D brain MRI: each iteration trains the encoder and
generator (with the code critic's score `c_loss = -CD(z_hat).mean()` of the
encoded latents in their loss), steps both optimizers, trains the image
critic, and then trains the code critic with `loss3 = -CD(z_rand).mean() -
c_loss + gradient_penalty_cd`.  `c_loss` is the one computed in the
encoder-generator phase, through `z_hat = E(real_images)`: the encoder's
optimizer has stepped since, so `loss3.backward(retain_graph=True)` fails
("one of the variables needed for gradient computation has been modified by
an inplace operation").  The fix recomputes the code critic's score on
`z_hat.detach()` for `loss3`.
Buggy line: `e_optimizer.step()` before `loss3.backward(...)` in `train`.
Expected finding: ADL003 there.
Source: https://github.com/cyclomon/3dbraingen/issues/16"""
import torch
import torch.nn as nn
from torch import autograd, optim


class Discriminator(nn.Module):
    def __init__(self, channel=4):
        super().__init__()
        self.conv1 = nn.Conv3d(1, channel, 3, stride=2, padding=1)
        self.conv2 = nn.Conv3d(channel, 1, 2)

    def forward(self, x):
        h = nn.functional.leaky_relu(self.conv1(x), 0.2)
        return self.conv2(h).view(x.size(0), -1)


class CodeDiscriminator(nn.Module):
    def __init__(self, code_size=8, num_units=16):
        super().__init__()
        self.l1 = nn.Sequential(nn.Linear(code_size, num_units), nn.LeakyReLU(0.2))
        self.l3 = nn.Linear(num_units, 1)

    def forward(self, x):
        return self.l3(self.l1(x))


class Generator(nn.Module):
    def __init__(self, noise=8):
        super().__init__()
        self.fc = nn.Linear(noise, 64)

    def forward(self, z):
        return torch.tanh(self.fc(z.view(z.size(0), -1))).view(-1, 1, 4, 4, 4)


class Encoder(nn.Module):
    def __init__(self, out_class=8, channel=16):
        super().__init__()
        self.fc1 = nn.Linear(64, channel)
        self.fc2 = nn.Linear(channel, out_class)

    def forward(self, x):
        h = nn.functional.leaky_relu(self.fc1(x.view(x.size(0), -1)), 0.2)
        return self.fc2(h)


def calc_gradient_penalty(model, x, x_gen, w=10):
    alpha = torch.rand(x.size(0), *([1] * (x.dim() - 1)))
    interpolates = (alpha * x + (1 - alpha) * x_gen).requires_grad_(True)
    d_out = model(interpolates)
    gradients = autograd.grad(d_out.sum(), interpolates, create_graph=True)[0]
    return w * ((gradients.view(x.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()


def train(loader, latent_dim=8, g_iter=1, d_iter=1, cd_iter=1):
    G, D, CD, E = Generator(latent_dim), Discriminator(), CodeDiscriminator(latent_dim), Encoder(latent_dim)
    g_optimizer = optim.Adam(G.parameters(), lr=2e-4)
    d_optimizer = optim.Adam(D.parameters(), lr=2e-4)
    e_optimizer = optim.Adam(E.parameters(), lr=2e-4)
    cd_optimizer = optim.Adam(CD.parameters(), lr=2e-4)
    criterion_l1 = nn.L1Loss()
    for real_images in loader:
        batch_size = real_images.size(0)

        for p in D.parameters():
            p.requires_grad = False
        for p in CD.parameters():
            p.requires_grad = False
        for p in E.parameters():
            p.requires_grad = True
        for p in G.parameters():
            p.requires_grad = True
        for iters in range(g_iter):
            G.zero_grad()
            E.zero_grad()
            z_rand = torch.randn((batch_size, latent_dim))
            z_hat = E(real_images).view(batch_size, -1)
            x_hat = G(z_hat)
            x_rand = G(z_rand)
            c_loss = -CD(z_hat).mean()
            d_real_loss = D(x_hat).mean()
            d_fake_loss = D(x_rand).mean()
            d_loss = -d_fake_loss - d_real_loss
            l1_loss = 10 * criterion_l1(x_hat, real_images)
            loss1 = l1_loss + c_loss + d_loss
            if iters < g_iter - 1:
                loss1.backward()
            else:
                loss1.backward(retain_graph=True)
            e_optimizer.step()  # the cause (ADL003) is not reported: see the finding at `loss3.backward`
            g_optimizer.step()

        for p in D.parameters():
            p.requires_grad = True
        for iters in range(d_iter):
            d_optimizer.zero_grad()
            z_rand = torch.randn((batch_size, latent_dim))
            z_hat = E(real_images).view(batch_size, -1)
            x_hat = G(z_hat)
            x_rand = G(z_rand)
            x_loss2 = -2 * D(real_images).mean() + D(x_hat).mean() + D(x_rand).mean()
            gradient_penalty_r = calc_gradient_penalty(D, real_images, x_rand.detach())
            loss2 = x_loss2 + gradient_penalty_r
            loss2.backward(retain_graph=True)
            d_optimizer.step()

        for p in D.parameters():
            p.requires_grad = False
        for p in CD.parameters():
            p.requires_grad = True
        for p in E.parameters():
            p.requires_grad = False
        for p in G.parameters():
            p.requires_grad = False
        for iters in range(cd_iter):
            cd_optimizer.zero_grad()
            z_rand = torch.randn((batch_size, latent_dim))
            gradient_penalty_cd = calc_gradient_penalty(CD, z_hat.detach(), z_rand)
            loss3 = -CD(z_rand).mean() - c_loss + gradient_penalty_cd
            loss3.backward(retain_graph=True)  # expect: ADL019 (the failing backward, for a reason the loop condition excludes: see docs/lint.md)
            cd_optimizer.step()


def run():
    torch.manual_seed(0)
    train([torch.rand(2, 1, 4, 4, 4) * 2 - 1])
