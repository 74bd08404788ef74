"""The importance-weighted autoencoder of PyTorch-VAE (`models/iwae.py`): K latent samples per
input, each with a log weight log p(x|z) + log p(z) - log q(z|x); the gradient estimator of the
IWAE paper (Burda et al., eq. 14) is sum_k w_k * grad(log weight_k) with the normalised weights
w = softmax(log weights) held constant. The loss is written as
`torch.sum(weight * log_weight)` with `weight = F.softmax(log_weight, dim=-1)` and the `.detach()`
left in a comment, so autograd also differentiates the weights and adds
sum_k grad(w_k) * log weight_k: every gradient is wrong, and nothing is raised.
Source: https://github.com/AntixK/PyTorch-VAE/issues/34 ("Not Detach Problem of IWAE ELBO Loss": the
weights should be detached from the computational graph), fix proposed in
https://github.com/AntixK/PyTorch-VAE/pull/53.
expect: silent"""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM, LATENT, SAMPLES = 12, 3, 5


class IWAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(IN_DIM, 32), nn.Tanh(), nn.Linear(32, 2 * LATENT))
        self.decoder = nn.Sequential(nn.Linear(LATENT, 32), nn.Tanh(), nn.Linear(32, IN_DIM))

    def forward(self, x):
        mu, log_var = self.encoder(x).chunk(2, dim=-1)
        std = torch.exp(0.5 * log_var)
        eps = torch.randn(x.shape[0], SAMPLES, LATENT)
        z = mu[:, None] + std[:, None] * eps  # B x S x D
        recons = self.decoder(z)
        return recons, z, mu, log_var

    def loss_function(self, x, recons, z, mu, log_var):
        log_p_x_z = -((recons - x[:, None]) ** 2).sum(-1)  # Gaussian likelihood, unit variance
        log_p_z = -0.5 * (z ** 2).sum(-1)
        log_q_z = -0.5 * (((z - mu[:, None]) ** 2) / log_var.exp()[:, None] + log_var[:, None]).sum(-1)
        log_weight = log_p_x_z + log_p_z - log_q_z  # B x S
        # Normalised importance weights
        weight = F.softmax(log_weight, dim=-1)  # .detach()
        return -torch.mean(torch.sum(weight * log_weight, dim=-1))


data = torch.sigmoid(torch.randn(16, IN_DIM))
model = IWAE()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
for step in range(6):
    optimizer.zero_grad()
    recons, z, mu, log_var = model(data)
    loss = model.loss_function(data, recons, z, mu, log_var)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
