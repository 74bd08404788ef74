"""vqtorch's `VectorQuant` can update its codebook with its own "in-place"
optimizer during the forward pass: it computes the codebook loss, calls
`loss.backward()` and steps the codebook optimizer, all inside `forward`.
The codebook loss is computed from the encoder's output, so that inner
backward frees the encoder's graph; the training loop's own
`loss.backward()` then goes back through the same encoder ("Trying to
backward through the graph a second time").  Setting `retain_graph=True`
on the inner backward (or computing the codebook loss on `z.detach()`)
avoids it.
Buggy line: `loss.backward()` in `train`, after the quantizer's inner
backward.
Expected finding: ADL019 there.
Source: https://github.com/minyoungg/vqtorch/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuant(nn.Module):
    def __init__(self, feature_size, num_codes, inplace_optimizer=None, beta=0.95):
        super().__init__()
        self.beta = beta
        self.codebook = nn.Embedding(num_codes, feature_size)
        self.inplace_codebook_optimizer = None
        if inplace_optimizer is not None:
            self.inplace_codebook_optimizer = inplace_optimizer(self.codebook.parameters())

    def quantize(self, z):
        d = torch.cdist(z, self.codebook.weight)
        return d.argmin(dim=-1)

    def forward(self, z):
        q = self.quantize(z)
        z_q = self.codebook(q)
        if self.training and self.inplace_codebook_optimizer is not None:
            loss = (self.beta * (z_q - z) ** 2 + (1 - self.beta) * (z_q - z.mean(0)) ** 2).mean()
            self.inplace_codebook_optimizer.zero_grad()
            loss.backward()
            self.inplace_codebook_optimizer.step()
            z_q = self.codebook(q)
        commitment = F.mse_loss(z, z_q.detach())
        z_q = z + (z_q - z).detach()
        return z_q, commitment


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
        self.vq = VectorQuant(4, 5, inplace_optimizer=lambda params: torch.optim.SGD(params, lr=0.1))
        self.decoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))

    def forward(self, x):
        z_q, commitment = self.vq(self.encoder(x))
        return self.decoder(z_q), commitment


def train(model, optimizer, batches):
    model.train()
    for x in batches:
        x_hat, commitment = model(x)
        loss = F.mse_loss(x_hat, x) + commitment
        optimizer.zero_grad()
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = AutoEncoder()
    params = list(model.encoder.parameters()) + list(model.decoder.parameters())
    train(model, torch.optim.Adam(params, lr=1e-3), [torch.randn(4, 6)])
