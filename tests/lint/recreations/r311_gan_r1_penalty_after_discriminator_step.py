"""A StyleGAN2 port to PyTorch Lightning computes the discriminator's R1
penalty inside `training_step` (on the discriminator's turn, every
`d_regularize_every` batches) and keeps it on the module,
`self.d_reg_loss = d_reg_loss(real_pred, real_img)`; its `optimizer_step`
override steps the discriminator with the main loss's gradients and then
backpropagates the kept penalty.  The step has already changed the
discriminator's weights that the penalty's graph saved ("one of the variables
needed for gradient computation has been modified by an inplace operation").
The fix backpropagates the penalty before the step (or recomputes it after).
Buggy line: `optimizer.step()` before `self.d_reg_loss.backward()` in
`StyleGAN2.optimizer_step`.
Expected finding: ADL003 there.
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/2820"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def d_r1_loss(real_pred, real_img):
    (grad_real,) = torch.autograd.grad(real_pred.sum(), real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


class StyleGAN2(nn.Module):
    def __init__(self, latent_dim=4, d_regularize_every=1):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(latent_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 6))
        self.discriminator = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
        self.latent_dim = latent_dim
        self.d_regularize_every = d_regularize_every
        self.d_reg = False

    def configure_optimizers(self):
        d_optim = torch.optim.Adam(self.discriminator.parameters(), lr=1e-3)
        g_optim = torch.optim.Adam(self.generator.parameters(), lr=1e-3)
        return [d_optim, g_optim]

    def training_step(self, batch, batch_idx, optimizer_idx):
        real_img = batch
        z = torch.randn(real_img.shape[0], self.latent_dim)
        if optimizer_idx == 0:
            fake_pred = self.discriminator(self.generator(z).detach())
            real_pred = self.discriminator(real_img)
            d_loss = d_logistic_loss(real_pred, fake_pred)
            self.d_reg = batch_idx % self.d_regularize_every == 0
            if self.d_reg:
                real_img.requires_grad = True
                real_pred = self.discriminator(real_img)
                self.d_reg_loss = d_r1_loss(real_pred, real_img)
            return d_loss
        fake_pred = self.discriminator(self.generator(z))
        return F.softplus(-fake_pred).mean()

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx):
        optimizer.step()  # expect: ADL003
        if optimizer_idx == 0 and self.d_reg:
            optimizer.zero_grad()
            (10.0 * self.d_reg_loss).backward()
            optimizer.step()
        optimizer.zero_grad()


def fit(module, batches):
    optimizers = module.configure_optimizers()
    for batch_idx, batch in enumerate(batches):
        for optimizer_idx, optimizer in enumerate(optimizers):
            loss = module.training_step(batch.clone(), batch_idx, optimizer_idx)
            loss.backward()
            module.optimizer_step(0, batch_idx, optimizer, optimizer_idx)


def run():
    torch.manual_seed(0)
    fit(StyleGAN2(), [torch.randn(4, 6) for _ in range(2)])
