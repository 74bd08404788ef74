"""Variational autoencoder whose latent is drawn with `torch.normal(mu, std)`. `torch.normal`
accepts tensors that require grad and its result has a grad_fn, but it passes no gradient to
`mu` or `std` (they get zeros): the reconstruction term never reaches the encoder, which is
trained by the KL term alone. Nothing is raised; the loss still goes down through the decoder.
Source: https://github.com/pytorch/pytorch/issues/4620 ("`torch.normal` accepts Variables but
does not propagate gradients"; the answer: sampling is not differentiable, use the
reparameterization `mu + std * eps` with `eps ~ N(0, 1)`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, dim=10, latent=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        std = torch.exp(0.5 * logvar)
        z = torch.normal(mu, std)
        return self.decoder(z), mu, logvar


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randn(32, 10)
losses = []
for step in range(4):
    recon, mu, logvar = model(data)
    kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))
    loss = F.mse_loss(recon, data) + 0.1 * kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "encoder": [p.detach().clone() for p in model.encoder.parameters()]}
