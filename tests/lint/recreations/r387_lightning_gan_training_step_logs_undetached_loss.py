"""Lightning's basic GAN tutorial returned from `training_step` an
`OrderedDict({"loss": g_loss, "progress_bar": tqdm_dict, "log": tqdm_dict})`
with `tqdm_dict = {"g_loss": g_loss}`: Lightning detaches the returned
`"loss"` but the logged dictionaries hold the loss tensor itself, so the
logger's history kept every step's graph (a deprecated pattern that may leak
memory).  Nothing raises.  The fix logs `g_loss.detach()` (or uses
`self.log`).  The trainer loop below stands in for Lightning's: it
backpropagates and detaches `"loss"` and keeps the `"log"` dictionaries.
Buggy line: `tqdm_dict = {"g_loss": g_loss}` in `GAN.training_step`.
ADL028 reports the caller's keeping line (marked), the function's `return` as related.
Source: https://github.com/Lightning-AI/tutorials/issues/132"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN(nn.Module):
    def __init__(self, latent_dim=4, img_dim=8):
        super().__init__()
        self.latent_dim = latent_dim
        self.generator = nn.Sequential(nn.Linear(latent_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, img_dim), nn.Tanh())
        self.discriminator = nn.Sequential(nn.Linear(img_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, z):
        return self.generator(z)

    def adversarial_loss(self, y_hat, y):
        return F.binary_cross_entropy_with_logits(y_hat, y)

    def training_step(self, batch, batch_idx, optimizer_idx):
        imgs = batch
        z = torch.randn(imgs.size(0), self.latent_dim)
        if optimizer_idx == 0:
            valid = torch.ones(imgs.size(0), 1)
            g_loss = self.adversarial_loss(self.discriminator(self(z)), valid)
            tqdm_dict = {"g_loss": g_loss}
            return OrderedDict({"loss": g_loss, "progress_bar": tqdm_dict, "log": tqdm_dict})
        valid = torch.ones(imgs.size(0), 1)
        fake = torch.zeros(imgs.size(0), 1)
        real_loss = self.adversarial_loss(self.discriminator(imgs), valid)
        fake_loss = self.adversarial_loss(self.discriminator(self(z).detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        return OrderedDict({"loss": d_loss, "progress_bar": {"d_loss": d_loss.item()}, "log": {"d_loss": d_loss.item()}})

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=2e-4)
        return [opt_g, opt_d]


def fit(module, batches):
    optimizers = module.configure_optimizers()
    logged = []
    for batch_idx, batch in enumerate(batches):
        for optimizer_idx, optimizer in enumerate(optimizers):
            output = module.training_step(batch, batch_idx, optimizer_idx)
            optimizer.zero_grad()
            output["loss"].backward()
            optimizer.step()
            output["loss"] = output["loss"].detach()
            logged.append(output["log"])  # expect: ADL028
    return logged


def bug_shows():
    """The logger's history holds the generator losses with their graphs."""
    torch.manual_seed(0)
    logged = fit(GAN(), [torch.randn(3, 8) for _ in range(2)])
    return all(entry["g_loss"].grad_fn is not None for entry in logged if "g_loss" in entry)
