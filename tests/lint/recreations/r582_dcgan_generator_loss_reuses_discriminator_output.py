"""A blog post walking through the official DCGAN tutorial's training step
(D on the real batch, D on the fake batch, `optimizerD.step()`, then G).  A
common edit of that step, which the post's step-by-step split invites, keeps
the discriminator's output on the fake batch from the D part and reuses it
for the generator's loss instead of running `netD(fake)` again after
`optimizerD.step()`.  The saved activations of D were overwritten by D's step
(the weights are updated in place), so `errG.backward()` raises "modified by
an inplace operation".  Re-created as the tutorial's loop: `netG`, `netD`,
BCE criterion, real / fake labels, and the D-then-G update in
`train_step`.  Raises at the first batch.
Buggy line: `errG = criterion(output_fake, label)` (D's output from before its
step reused for G's loss).
Source: https://ireneli.eu/2019/07/16/deep-learning-18-gans-with-pytorch/"""
import torch
import torch.nn as nn

nz = 8
real_label, fake_label = 1.0, 0.0


class NetG(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(True), nn.Linear(32, 16), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class NetD(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1)


def train_step(netG, netD, optimizerG, optimizerD, criterion, data):
    b_size = data.size(0)
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    label = torch.full((b_size,), real_label)
    output = netD(data)
    errD_real = criterion(output, label)
    errD_real.backward()

    noise = torch.randn(b_size, nz)
    fake = netG(noise)
    label.fill_(fake_label)
    output_fake = netD(fake)
    errD_fake = criterion(output_fake, label)
    errD_fake.backward(retain_graph=True)
    optimizerD.step()  # expect: ADL003

    # (2) Update G: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    errG = criterion(output_fake, label)
    errG.backward()
    optimizerG.step()
    return errD_real.item() + errD_fake.item(), errG.item()


def run():
    torch.manual_seed(0)
    netG, netD = NetG(), NetD()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for _ in range(2):
        train_step(netG, netD, optimizerG, optimizerD, criterion, torch.rand(4, 16) * 2 - 1)
