"""ADN (artifact disentanglement network), `adn/models/adn.py` with the trainer plumbing of
`adn/models/base.py` and the GAN losses of `adn/networks/losses.py`: every network is wrapped by
`_get_trainer`, which hangs an optimizer, a `_loss` dict and an `_update()` method on it
(`_update` sums `_loss`, calls `backward()` and `optimizer.step()`).  `ADNTrain.optimize` runs the
generator's first branch, then the criterion for the low-quality GAN term puts *both* losses
away: the generator's `get_g_loss(fake, real)` (through the discriminator, not detached) into
`model_g._loss`, and the discriminator's `get_d_loss(fake.detach(), real)` into
`model_dl._loss`.  Then `self.model_dl._update()` backpropagates and steps the discriminator,
and only at the end `self.model_g._update()` backpropagates the generator's losses, whose graph
still goes through the discriminator's weights that the step has just changed in place.  The
issue tracker reports it as "one of the variables needed for gradient computation has been
modified by an inplace operation" (issue 21; the maintainer points to PyTorch 1.0, where the
check was weaker).
Re-created in my own words with the repository's structure: a two-branch generator
(`forward1` gives the low- and high-quality outputs), a patch discriminator, `add_gan_loss`
attaching `get_g_loss`/`get_d_loss` with an LSGAN loss, `_get_trainer` attaching `_update` and
`_clear` with `types.MethodType`, and `optimize(img_low, img_high)`.
Raises at `model_g._update()`'s `loss.backward()` ("modified by an inplace operation").
Source: https://github.com/liaohaofu/adn/blob/10fd63083ffaf16f60a442978f548954405c2d61/adn/models/adn.py"""
import types
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.optim as optim


class ADN(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.LeakyReLU(0.2))
        self.to_low = nn.Conv2d(ch, 1, 3, padding=1)
        self.to_high = nn.Conv2d(ch, 1, 3, padding=1)

    def forward1(self, img_low):
        code = self.encoder(img_low)
        return torch.tanh(self.to_low(code)), torch.tanh(self.to_high(code))


class NLayerDiscriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(1, ch, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ch, 1, 3, 1, 1))

    def forward(self, x):
        return self.model(x)


def add_gan_loss(model):
    mse = nn.MSELoss()

    def get_d_loss(self, fake, real):
        pred_real = self(real)
        pred_fake = self(fake.detach())
        return (mse(pred_real, torch.ones_like(pred_real)) + mse(pred_fake, torch.zeros_like(pred_fake))) * 0.5

    def get_g_loss(self, fake, real):
        pred_fake = self(fake)
        return mse(pred_fake, torch.ones_like(pred_fake))

    model.__dict__["get_d_loss"] = types.MethodType(get_d_loss, model)
    model.__dict__["get_g_loss"] = types.MethodType(get_g_loss, model)
    return model


def _get_trainer(model, lr=1e-4):
    optimizer = optim.Adam(model.parameters(), lr=lr, betas=(0.5, 0.999))

    def _clear(self):
        self.zero_grad()
        self._loss = OrderedDict()

    def _update(self):
        if len(self._loss) == 0:
            return
        loss = sum(self._loss.values())
        self._loss["all"] = loss
        loss.backward()
        self._optimizer.step()

    model.__dict__["_optimizer"] = optimizer
    model.__dict__["_loss"] = OrderedDict()
    model.__dict__["_update"] = types.MethodType(_update, model)
    model.__dict__["_clear"] = types.MethodType(_clear, model)
    return model


class ADNTrain(nn.Module):
    def __init__(self, wgt_gl=1.0, wgt_lh=20.0, wgt_ll=20.0):
        super().__init__()
        self.model_g = _get_trainer(ADN())
        self.model_dl = add_gan_loss(_get_trainer(NLayerDiscriminator()))
        self.wgts = {"gl": wgt_gl, "lh": wgt_lh, "ll": wgt_ll}
        self.l1 = nn.L1Loss()

    def criterion_gl(self, fake, real):
        self.model_g._loss["gl_g"] = self.wgts["gl"] * self.model_dl.get_g_loss(fake, real)
        self.model_dl._loss["gl_d"] = self.wgts["gl"] * self.model_dl.get_d_loss(fake.detach(), real)

    def optimize(self, img_low, img_high):
        self.model_g._clear()
        self.model_dl._clear()
        self.pred_ll, self.pred_lh = self.model_g.forward1(img_low)
        self.criterion_gl(self.pred_lh, img_high)
        self.model_g._loss["lh"] = self.wgts["lh"] * self.l1(self.pred_lh, img_high)
        self.model_g._loss["ll"] = self.wgts["ll"] * self.l1(self.pred_ll, img_low)
        self.model_dl._update()

        self.model_g._update()  # missed: ADL003 across methods: the discriminator's step is in model_dl._update, a method attached with types.MethodType


def run(iterations=2):
    torch.manual_seed(0)
    trainer = ADNTrain()
    for _ in range(iterations):
        img_low = torch.rand(2, 1, 16, 16) * 2 - 1
        img_high = torch.rand(2, 1, 16, 16) * 2 - 1
        trainer.optimize(img_low, img_high)
    return trainer
