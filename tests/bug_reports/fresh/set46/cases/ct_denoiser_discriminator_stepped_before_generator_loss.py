"""Low-dose CT denoising with a U-Net generator and an image discriminator trained as a GAN. Each
iteration the discriminator scores the real and the denoised patches in one batch, its hinge loss
is back-propagated with `retain_graph=True` and `optD.step()` updates it; the generator's
adversarial loss is then built from the same `pred_neg` scores, computed by the discriminator's
weights before that step. backward() needs those saved weights, which the step changed in place:
"one of the variables needed for gradient computation has been modified by an inplace operation"
(the report's tensor is a [256, 256, 3, 3] convolution weight; here a linear layer's). The change
the loop needs: score the denoised patches again with the updated discriminator for the
generator's loss (`GANLoss(netD(pred))`).
Source: https://github.com/reach2sbera/ldct_nonlocal/issues/3
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(1, 8, 3, padding=1)
        self.mid = nn.Conv2d(8, 8, 3, padding=1)
        self.up = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        d = F.relu(self.down(x))
        m = F.relu(self.mid(F.max_pool2d(d, 2)))
        m = F.interpolate(m, scale_factor=2)
        return x + self.up(torch.cat([d, m], dim=1))


class ImageDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 1)

    def forward(self, x):
        x = F.leaky_relu(self.conv1(x), 0.2)
        x = F.leaky_relu(self.conv2(x), 0.2)
        return self.fc(x.flatten(1))


class NCMSE(nn.Module):
    """Noise-conscious MSE: the residual weighted by the low-dose input's intensity."""

    def forward(self, pred, y, x):
        return torch.mean((1.0 + x.abs()) * (pred - y) ** 2)


class SNGenLoss(nn.Module):
    def forward(self, neg):
        return -torch.mean(neg)


class SNDisLoss(nn.Module):
    def forward(self, pos, neg):
        return torch.mean(F.relu(1.0 - pos)) + torch.mean(F.relu(1.0 + neg))


clean = torch.rand(12, 16, 16)
noisy = clean + 0.2 * torch.randn(12, 16, 16)
data_loader = [(noisy[i:i + 4], clean[i:i + 4]) for i in range(0, 12, 4)]

netG = UNet()
netD = ImageDiscriminator()
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=4e-3)
criterion = NCMSE()
GANLoss = SNGenLoss()
DLoss = SNDisLoss()

g_losses = []
for epoch in range(2):
    netG.train()
    for iter_, (x, y) in enumerate(data_loader):
        x = x.unsqueeze(1).float()
        y = y.unsqueeze(1).float()

        pred = netG(x)

        optD.zero_grad()
        netD.zero_grad()

        pos_neg_imgs = torch.cat([y, pred], dim=0)
        pred_pos_neg = netD(pos_neg_imgs)
        pred_pos, pred_neg = torch.chunk(pred_pos_neg, 2, dim=0)
        d_loss = DLoss(pred_pos, pred_neg)
        d_loss.backward(retain_graph=True)
        optD.step()

        optG.zero_grad()
        netG.zero_grad()

        g_loss = GANLoss(pred_neg)
        rloss = criterion(pred, y, x)
        loss = g_loss + 0.1 * rloss

        loss.backward()

        optG.step()
        g_losses.append(loss.item())

result = {"netG": {k: v.detach().clone() for k, v in netG.state_dict().items()},
          "netD": {k: v.detach().clone() for k, v in netD.state_dict().items()},
          "g_losses": torch.tensor(g_losses)}
