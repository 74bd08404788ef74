"""HDGan's GAN trainer logs each scale's discriminator image loss with
`d_plot_dict[key].plot(to_numpy(img_loss).mean())` before
`discriminator_loss.backward()`.  Its `to_numpy` helper was written for
PyTorch 0.3: it unwraps `src.data` only when `type(src) == Variable`, which
is never true once Variables and tensors were merged, so it calls `.numpy()`
on the loss itself and training stops with "RuntimeError: Can't call numpy()
on Variable that requires grad. Use var.detach().numpy() instead."
Re-created as the helper, a plot logger, a two-scale generator and
discriminator and the discriminator update of `train_gans`.
Buggy line: `d_plot_dict[key].plot(to_numpy(img_loss).mean())` (through
`to_numpy`, whose `.numpy()` is reached with the graph-carrying loss).
Source: https://github.com/ypxie/HDGan/issues/15"""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def to_numpy(src):
    if type(src) == np.ndarray:
        return src
    elif type(src) == Variable:
        x = src.data
    else:
        x = src
    return x.cpu().numpy()


class PlotLogger:
    def __init__(self, name):
        self.name, self.values = name, []

    def plot(self, value):
        self.values.append(float(value))


class Generator(nn.Module):
    def __init__(self, emb_dim=8, z_dim=4):
        super().__init__()
        self.fc = nn.Linear(emb_dim + z_dim, 3 * 8 * 8)

    def forward(self, embeddings, z):
        x = torch.tanh(self.fc(torch.cat([embeddings, z], dim=1))).view(-1, 3, 8, 8)
        return {'64': nn.functional.avg_pool2d(x, 2), '128': x}


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, 1, 1)

    def forward(self, images):
        return self.conv(images).mean(dim=(1, 2, 3))


def train_gans(batches, netG, netDs, optimizerD, scales=('64', '128')):
    d_plot_dict = {key: PlotLogger('d_img_loss_' + key) for key in scales}
    d_loss_plot = PlotLogger('d_loss')
    for images, embeddings in batches:
        z = torch.randn(images['64'].size(0), 4)
        fake_images = netG(embeddings, z)
        discriminator_loss = 0
        for key in scales:
            netD = netDs[key]
            real_logit = netD(images[key])
            fake_logit = netD(fake_images[key].detach())
            img_loss = nn.functional.softplus(-real_logit).mean() + nn.functional.softplus(fake_logit).mean()
            discriminator_loss += img_loss
            d_plot_dict[key].plot(to_numpy(img_loss).mean())  # missed: ADL036
        d_loss_val = to_numpy(discriminator_loss).mean()
        discriminator_loss.backward()
        optimizerD.step()
        for netD in netDs.values():
            netD.zero_grad()
        d_loss_plot.plot(d_loss_val)


def run():
    torch.manual_seed(0)
    netG = Generator()
    netDs = {'64': Discriminator(), '128': Discriminator()}
    optimizerD = torch.optim.Adam([p for d in netDs.values() for p in d.parameters()], lr=2e-4)
    batches = [({'64': torch.randn(2, 3, 4, 4), '128': torch.randn(2, 3, 8, 8)}, torch.randn(2, 8))]
    train_gans(batches, netG, netDs, optimizerD)
