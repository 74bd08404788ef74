"""SS-VAE-pytorch (semi-supervised VAE): the loss computes
`log_q_z = log_Gaussian_pro(z, z_mu, z_var)`, a helper that evaluates the
Gaussian log-density with numpy (`np.log`, `np.sum` on the tensors).  On
PyTorch >= 0.4 the encoder's outputs require grad and the first training
step fails with "Can't call numpy() on Variable that requires grad. Use
var.detach().numpy() instead." (and detaching would cut the KL term off the
graph; the density has to be computed with torch ops).  Re-created as the
helper, a small encoder/decoder and the training step.
Buggy line: `np.log(2 * np.pi * var)` in `log_Gaussian_pro`.
Source: https://github.com/GuHY777/SS-VAE-pytorch/issues/1"""
import numpy as np
import torch
import torch.nn as nn


def log_Gaussian_pro(x, mu, var):
    return -0.5 * np.sum(np.log(2 * np.pi * var) + (x - mu) ** 2 / var, axis=1)  # missed: ADL036


class VAE(nn.Module):
    def __init__(self, d=10, z=2):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Linear(z, d)

    def forward(self, x):
        z_mu, z_logvar = self.enc(x).chunk(2, dim=1)
        z_var = z_logvar.exp()
        z = z_mu + z_var.sqrt() * torch.randn_like(z_mu)
        return self.dec(z), z, z_mu, z_var


def run():
    torch.manual_seed(0)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 10)
    recon, z, z_mu, z_var = model(x)
    log_q_z = log_Gaussian_pro(z, z_mu, z_var)
    log_p_z = -0.5 * (z ** 2 + np.log(2 * np.pi)).sum(1)
    loss = ((recon - x) ** 2).sum(1).mean() + torch.as_tensor(log_q_z - log_p_z).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
