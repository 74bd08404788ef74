"""TiDE (time-series dense encoder) forecasting several targets at once: in the multivariate
branch the model re-wraps its per-target predictions with
`prediction = [i.clone().detach().requires_grad_(True) for i in prediction]`. Each prediction is
now a new leaf: the loss still has a graph and `backward()` runs, but it stops at those leaves,
so the encoder, decoder and temporal decoder never get a gradient and Adam never moves them. The
multivariate model "trains" (no error, a loss every step) and never learns.
Source: https://github.com/sktime/pytorch-forecasting/pull/2208 ("remove erroneous .detach() in
TiDE multivariate prediction path": `.clone().requires_grad_(True)` without `.detach()`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.dense = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_out))
        self.skip = nn.Linear(n_in, n_out)
        self.norm = nn.LayerNorm(n_out)

    def forward(self, x):
        return self.norm(self.dense(x) + self.skip(x))


class TiDE(nn.Module):
    def __init__(self, context_length=24, horizon=6, n_targets=2, n_hidden=32):
        super().__init__()
        self.horizon = horizon
        self.n_targets = n_targets
        self.encoder = ResidualBlock(context_length * n_targets, n_hidden, n_hidden)
        self.decoder = ResidualBlock(n_hidden, n_hidden, horizon * n_targets * 4)
        self.temporal_decoder = ResidualBlock(4, 8, 1)
        self.lookback_skip = nn.Linear(context_length, horizon)

    def forward(self, x):
        # x: (batch, context_length, n_targets)
        batch = x.shape[0]
        encoded = self.encoder(x.reshape(batch, -1))
        decoded = self.decoder(encoded).reshape(batch, self.horizon, self.n_targets, 4)
        out = self.temporal_decoder(decoded).squeeze(-1)
        out = out + self.lookback_skip(x.transpose(1, 2)).transpose(1, 2)
        prediction = list(out.unbind(dim=-1))
        if self.n_targets > 1:
            prediction = [i.clone().detach().requires_grad_(True) for i in prediction]
        return prediction


def make_series(n=64, length=30, n_targets=2):
    t = torch.arange(length, dtype=torch.float32)
    phase = torch.rand(n, 1, n_targets) * 6.28
    series = torch.sin(t[None, :, None] * 0.4 + phase) + 0.05 * torch.randn(n, length, n_targets)
    return series[:, :24], series[:, 24:]


context, target = make_series()
model = TiDE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    prediction = model(context)
    loss = sum(F.mse_loss(pred, target[..., k]) for k, pred in enumerate(prediction))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
