"""WGAN-GP for 1-D signals (LixiangHan/GANs-for-1D-Signal, `wgan_gp_train.py`): each critic step
builds the gradient penalty with `autograd.grad(netD(x_p).mean(), x_p, create_graph=True)`, but
`loss_D = torch.mean(netD(fake) - netD(real_cpu))` leaves it out, so `loss_D.backward()` never
reaches the penalty's double-backward graph: the critic trains on the Wasserstein term alone (with
the weight clipping also left in). No error. The issue ("gradient penalty was not actually
implemented ... grad_penalty should be added to loss_D") gives the fix: add the penalty to the
critic's loss.
Source: https://github.com/LixiangHan/GANs-for-1D-Signal/issues/7
expect: silent"""
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

p_coeff = 10
n_critic = 5
lr = 1e-4
epoch_num = 2
batch_size = 8
nz = 16
signal_len = 32


class Generator(nn.Module):
    def __init__(self, nz):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose1d(nz, 16, 8, 1, 0), nn.BatchNorm1d(16), nn.ReLU(True),
            nn.ConvTranspose1d(16, 8, 4, 2, 1), nn.BatchNorm1d(8), nn.ReLU(True),
            nn.ConvTranspose1d(8, 1, 4, 2, 1), nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv1d(1, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(8, 16, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(16, 1, 8, 1, 0),
        )

    def forward(self, x):
        return self.main(x)


def weights_init(m):
    if type(m).__name__.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)


t = torch.linspace(0, 6.28, signal_len)
signals = torch.stack([torch.sin(t * (1 + i % 3)) * 0.8 for i in range(32)]).unsqueeze(1)
trainloader = [(signals[i:i + batch_size], None) for i in range(0, 32, batch_size)]

netD = Discriminator()
netD.apply(weights_init)
netG = Generator(nz)
netG.apply(weights_init)
optimizerD = optim.RMSprop(netD.parameters(), lr=lr)
optimizerG = optim.RMSprop(netG.parameters(), lr=lr)

d_losses, g_losses = [], []
for epoch in range(epoch_num):
    for step, (data, _) in enumerate(trainloader):
        real_cpu = data
        b_size = real_cpu.size(0)
        netD.zero_grad()

        noise = torch.randn(b_size, nz, 1)
        fake = netG(noise)

        # gradient penalty
        eps = torch.Tensor(b_size, 1, 1).uniform_(0, 1)
        x_p = eps * data + (1 - eps) * fake
        grad = autograd.grad(netD(x_p).mean(), x_p, create_graph=True, retain_graph=True)[0].view(b_size, -1)
        grad_norm = torch.norm(grad, 2, 1)
        grad_penalty = p_coeff * torch.pow(grad_norm - 1, 2)

        loss_D = torch.mean(netD(fake) - netD(real_cpu))
        loss_D.backward()
        optimizerD.step()

        for p in netD.parameters():
            p.data.clamp_(-0.01, 0.01)

        if step % n_critic == 0:
            noise = torch.randn(b_size, nz, 1)
            netG.zero_grad()
            fake = netG(noise)
            loss_G = -torch.mean(netD(fake))
            netD.zero_grad()
            netG.zero_grad()
            loss_G.backward()
            optimizerG.step()
            g_losses.append(loss_G.item())
        d_losses.append(loss_D.item())

result = {
    "d_losses": torch.tensor(d_losses),
    "g_losses": torch.tensor(g_losses),
    "netD": [p.detach().clone() for p in netD.parameters()],
    "netG": [p.detach().clone() for p in netG.parameters()],
}
