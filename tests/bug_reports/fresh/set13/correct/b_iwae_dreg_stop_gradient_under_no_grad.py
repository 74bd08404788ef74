"""IWAE with the DReG estimator whose stop-gradient detaches the posterior parameters
(`mu_stop, logvar_stop = mu.detach(), logvar.detach()`): the encoder gets DReG's gradient.
Source: https://github.com/pytorch/pytorch/issues/25783 (https://github.com/iffsid/DReG-PyTorch/commit/f4e549d7c54b56c78e18b35f01912e262c278b11)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PIXELS, HIDDEN, LATENT, SAMPLES, BATCH = 12, 16, 3, 5, 8


def normal_logpdf(x, mu, logvar):
    return -0.5 * (math.log(2.0 * math.pi) + logvar) - (x - mu) ** 2.0 / (2.0 * torch.exp(logvar))


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(PIXELS, HIDDEN)
        self.fc21 = nn.Linear(HIDDEN, LATENT)
        self.fc22 = nn.Linear(HIDDEN, LATENT)
        self.fc3 = nn.Linear(LATENT, HIDDEN)
        self.fc4 = nn.Linear(HIDDEN, PIXELS)
        self.inference_layers = [self.fc1, self.fc21, self.fc22]
        self.generator_layers = [self.fc3, self.fc4]

    def encode(self, x):
        net = F.relu(self.fc1(x))
        return self.fc21(net), self.fc22(net)

    def reparameterize(self, mu, logvar, k):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn((k,) + mu.shape[1:])
        return eps.mul(std).add_(mu)

    def decode(self, z):
        return self.fc4(F.relu(self.fc3(z)))

    def forward(self, x, k):
        mu, logvar = self.encode(x)
        mu, logvar = mu[None, ...], logvar[None, ...]
        z = self.reparameterize(mu, logvar, k)
        return self.decode(z), z, mu, logvar


def set_requires_grad(layers, flag):
    for layer in layers:
        for p in layer.parameters():
            p.requires_grad = flag


def log_weights(x, x_logit, z, mu, logvar):
    logpx = -F.binary_cross_entropy_with_logits(x_logit, x.expand_as(x_logit), reduction="none").sum(-1)
    logpz = normal_logpdf(z, torch.zeros_like(z), torch.zeros_like(z)).sum(-1)
    logqz = normal_logpdf(z, mu, logvar).sum(-1)
    return logpx + logpz - logqz


def compute_elbo(x, x_logit, z, mu, logvar):
    logw = log_weights(x, x_logit, z, mu, logvar)
    return torch.mean(torch.logsumexp(logw, dim=0) - math.log(logw.shape[0]))


def compute_elbo_dreg(x, x_logit, z, mu, logvar):
    # Gradient only go to phi through z
    mu_stop, logvar_stop = mu.detach(), logvar.detach()
    logw = log_weights(x, x_logit, z, mu_stop, logvar_stop)
    # Don't backprop through w_i / (sum_i w_i)
    with torch.no_grad():
        reweight = torch.exp(logw - torch.logsumexp(logw, dim=0, keepdim=True)).pow(2)
    return torch.mean(torch.sum(reweight * logw, dim=0))


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = (torch.rand(BATCH, PIXELS) < 0.4).float()

elbos, encoder_grads = [], []
for step in range(3):
    optimizer.zero_grad()
    # gradient for the generator: the IWAE bound
    set_requires_grad(model.inference_layers, False)
    x_logit, z, mu, logvar = model(data, k=SAMPLES)
    loss = -compute_elbo(data, x_logit, z, mu, logvar)
    loss.backward()
    set_requires_grad(model.inference_layers, True)
    elbos.append(-loss.detach())
    # gradient for the inference network: DReG
    set_requires_grad(model.generator_layers, False)
    x_logit, z, mu, logvar = model(data, k=SAMPLES)
    loss_dreg = -compute_elbo_dreg(data, x_logit, z, mu, logvar)
    loss_dreg.backward()
    set_requires_grad(model.generator_layers, True)
    encoder_grads.append([p.grad.clone() for layer in model.inference_layers for p in layer.parameters()])
    optimizer.step()

result = {
    "elbos": torch.stack(elbos),
    "encoder_grads": encoder_grads,
    "params": [p.detach().clone() for p in model.parameters()],
}
