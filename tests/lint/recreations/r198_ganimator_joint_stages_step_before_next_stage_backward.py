"""GANimator trains a pyramid of motion generators; in joint training each
stage's generator takes the upsampled output of the previous stage, and
`joint_train` maps `optimize_parameters(gen=True, disc=False)` over the
stages.  Each call runs `backward_G()` (`loss_total.backward(retain_graph=
True)`) and then `self.optimizerG.step()`, so the second stage's generator
loss is backpropagated through the first stage's generator after that
generator's weights were updated in place ("one of the variables needed
for gradient computation has been modified by an inplace operation",
raised from `backward_G` of the next stage).
Buggy line: `self.optimizerG.step()` in `optimize_parameters`, before the
next stage's `backward_G()`.
Expected finding: ADL003 there.
Source: https://github.com/PeizhuoLi/ganimator/issues/5"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1dModel(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv1d(channels, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv1d(8, channels, 3, padding=1))

    def forward(self, x, prev_img=0):
        return self.layers(x) + prev_img


class GAN_model:
    def __init__(self, gen, disc, lr=1e-4):
        self.gen = gen
        self.disc = disc
        self.optimizerG = torch.optim.Adam(gen.parameters(), lr=lr)
        self.optimizerD = torch.optim.Adam(disc.parameters(), lr=lr)
        self.fake_res = None

    def disc_requires_grad_(self, requires_grad):
        for para in self.disc.parameters():
            para.requires_grad = requires_grad

    def forward(self, noise, real, img_base=0):
        self.fake_res = self.gen(noise + img_base, img_base)
        self.real_res = real

    def backward_G(self):
        pred_fake = self.disc(self.fake_res)
        loss_total = F.mse_loss(pred_fake, torch.ones_like(pred_fake))
        loss_total.backward(retain_graph=True)

    def optimize_parameters(self, gen=True, disc=True):
        if gen:
            self.disc_requires_grad_(False)
            self.optimizerG.zero_grad()
            self.backward_G()
            self.optimizerG.step()  # missed: ADL003
        if disc:
            self.disc_requires_grad_(True)
            self.optimizerD.zero_grad()
            pred_real = self.disc(self.real_res)
            pred_fake = self.disc(self.fake_res.detach())
            loss_D = (F.mse_loss(pred_real, torch.ones_like(pred_real)) + F.mse_loss(pred_fake, torch.zeros_like(pred_fake))) * 0.5
            loss_D.backward()
            self.optimizerD.step()


def joint_train(reals, gan_models, length=8):
    img = 0
    for real, gan_model in zip(reals, gan_models):
        noise = torch.randn(1, 4, length)
        if isinstance(img, torch.Tensor):
            img = F.interpolate(img, size=length, mode='linear', align_corners=False)
        gan_model.forward(noise, real, img)
        img = gan_model.fake_res
    optimize_lambda = lambda x: x.optimize_parameters(gen=True, disc=False)
    list(map(optimize_lambda, gan_models))


def run():
    torch.manual_seed(0)
    gan_models = [GAN_model(Conv1dModel(), Conv1dModel()) for _ in range(2)]
    reals = [torch.randn(1, 4, 8), torch.randn(1, 4, 8)]
    joint_train(reals, gan_models)
