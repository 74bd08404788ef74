"""Probabilistic autoencoder: after training the autoencoder, the user fits a normalizing flow
(a stack of affine coupling layers) on the latent codes; the codes are handed to `flow.fit` still
attached to the encoder's graph, so the flow's second epoch backpropagates into an encoder graph
that the first epoch freed.
Source: https://github.com/davidnabergoj/torchflows/issues/8 ("train_loss.backward() throws an
error: Trying to backward through the graph a second time"; "The input to flow.fit is the latent
space of my autoencoder"; `retain_graph=True` did not help: the latents must be detached).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
LATENT = 4


class AffineCoupling(nn.Module):
    def __init__(self, dim, flip):
        super().__init__()
        self.flip = flip
        self.net = nn.Sequential(nn.Linear(dim // 2, 16), nn.Tanh(), nn.Linear(16, dim))

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        if self.flip:
            a, b = b, a
        log_s, t = self.net(a).chunk(2, dim=-1)
        b = b * log_s.exp() + t
        out = torch.cat([b, a] if self.flip else [a, b], dim=-1)
        return out, log_s.sum(-1)


class Flow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(dim, i % 2 == 1) for i in range(4)])

    def log_prob(self, x):
        log_det = 0
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return -0.5 * (x ** 2).sum(-1) - 0.5 * x.shape[-1] * math.log(2 * math.pi) + log_det

    def fit(self, x_train, n_epochs=3, batch_size=16):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        history = []
        for _ in range(n_epochs):
            for i in range(0, len(x_train), batch_size):
                train_loss = -self.log_prob(x_train[i:i + batch_size]).mean()
                optimizer.zero_grad()
                train_loss.backward()
                optimizer.step()
                history.append(train_loss.detach())
        return history


encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, LATENT))
data = torch.randn(32, 20)
z = encoder(data)
flow = Flow(LATENT)
history = flow.fit(z.detach())
result = {"history": history, "flow": [p.detach().clone() for p in flow.parameters()]}
