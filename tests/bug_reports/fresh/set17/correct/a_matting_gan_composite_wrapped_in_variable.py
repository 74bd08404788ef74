"""Background matting trained with an adversarial loss on re-composited images
(senguptaumd/Background-Matting, functions.py, compose_image_withshift): the predicted foreground
and alpha are shifted, composited over a new background and judged by the discriminator, but the
helper returned `torch.autograd.Variable(image_sh)`, which on current PyTorch is a detached copy.
The generator's adversarial term reaches the generator with no gradient, so the generator trains
on its supervised terms alone. Nothing is raised.
Source: https://github.com/senguptaumd/Background-Matting/issues/51 ("loss_ganG is not used at
all": the `Variable(...)` wrapper cuts the graph; the fix given: return `image_sh` itself).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, SIZE, GAN_WEIGHT = 2, 10, 0.1


class MattingGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.ReLU())
        self.alpha = nn.Conv2d(8, 1, 3, padding=1)
        self.foreground = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, image, background):
        hidden = self.body(torch.cat([image, background], dim=1))
        return torch.tanh(self.alpha(hidden)), torch.tanh(self.foreground(hidden))


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, image):
        return self.body(image)


def compose_image_withshift(alpha_pred, fg_pred, bg):
    image_sh = torch.zeros(fg_pred.shape)
    for t in range(fg_pred.shape[0]):
        n = int(torch.randint(1, SIZE - 1, ()))
        alpha_sh = (torch.roll(alpha_pred[t], n, dims=2) + 1) / 2
        fg_sh = torch.roll(fg_pred[t], n, dims=2)
        image_sh[t, ...] = fg_sh * alpha_sh + (1 - alpha_sh) * bg[t]
    return image_sh


netG, netD = MattingGenerator(), PatchDiscriminator()
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
image, bg, new_bg = torch.randn(BATCH, 3, SIZE, SIZE), torch.randn(BATCH, 3, SIZE, SIZE), torch.randn(BATCH, 3, SIZE, SIZE)
alpha_target = torch.rand(BATCH, 1, SIZE, SIZE) * 2 - 1
real_images = torch.randn(BATCH, 3, SIZE, SIZE)

lossesG, lossesD = [], []
for step in range(3):
    alpha_pred, fg_pred = netG(image, bg)
    composite = compose_image_withshift(alpha_pred, fg_pred, new_bg)

    optG.zero_grad()
    fake_score = netD(composite)
    loss_ganG = F.mse_loss(fake_score, torch.ones_like(fake_score))
    lossG = F.l1_loss(alpha_pred, alpha_target) + GAN_WEIGHT * loss_ganG
    lossG.backward()
    optG.step()

    optD.zero_grad()
    real_score, fake_score = netD(real_images), netD(composite.detach())
    lossD = 0.5 * (F.mse_loss(real_score, torch.ones_like(real_score)) + F.mse_loss(fake_score, torch.zeros_like(fake_score)))
    lossD.backward()
    optD.step()
    lossesG.append(lossG.detach())
    lossesD.append(lossD.detach())

result = {"lossesG": torch.stack(lossesG), "lossesD": torch.stack(lossesD),
          "paramsG": [p.detach().clone() for p in netG.parameters()],
          "paramsD": [p.detach().clone() for p in netD.parameters()]}
