"""A normalizing flow (ActNorm + affine coupling layers) trained by maximum likelihood, saved to
a checkpoint and resumed. ActNorm initialises its shift and log-scale from the first batch it
sees (data-dependent initialisation) and remembers that it did in a plain Python attribute,
`self.initialized = True`. The attribute is not in the state dict: the resumed model loads the
trained shift and log-scale, its flag is False again, and its first forward pass overwrites the
trained values with the statistics of the current batch. Training goes on from a different
flow than the one saved; nothing is raised.
Source: https://github.com/bayesiains/nflows/issues/4 ("Actnorm does not register `initialized`
as buffer": "When you then load a model from the state dict and continue training, the scale and
shift of the actnorm layers are re-initialized"; the fix registers the flag as a buffer,
`self.register_buffer("initialized", torch.tensor(False, dtype=torch.bool))`).
expect: silent"""
import io

import torch
import torch.nn as nn

torch.manual_seed(0)

DIM, LAYERS = 4, 3


class ActNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift = nn.Parameter(torch.zeros(DIM))
        self.log_scale = nn.Parameter(torch.zeros(DIM))
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.shift.copy_(-x.mean(0))
                self.log_scale.copy_(-torch.log(x.std(0) + 1e-6))
            self.initialized = True
        return (x + self.shift) * self.log_scale.exp(), self.log_scale.sum().expand(x.shape[0])


class AffineCoupling(nn.Module):
    def __init__(self, flip):
        super().__init__()
        self.flip = flip
        self.net = nn.Sequential(nn.Linear(DIM // 2, 32), nn.Tanh(), nn.Linear(32, DIM))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        if self.flip:
            a, b = b, a
        log_s, t = self.net(a).chunk(2, dim=1)
        log_s = torch.tanh(log_s)
        b = b * log_s.exp() + t
        out = torch.cat([b, a] if self.flip else [a, b], dim=1)
        return out, log_s.sum(1)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(m for i in range(LAYERS) for m in (ActNorm(), AffineCoupling(i % 2 == 1)))

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return torch.distributions.Normal(0.0, 1.0).log_prob(x).sum(1) + log_det


def batches(n):
    mixing = torch.tensor([[1.0, 0.5, 0.0, 0.2], [0.0, 1.0, 0.3, 0.0], [0.0, 0.0, 2.0, 0.1], [0.0, 0.0, 0.0, 0.5]])
    return [torch.randn(64, DIM) @ mixing + 3.0 for _ in range(n)]


def train(flow, data):
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
    losses = []
    for x in data:
        loss = -flow.log_prob(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


flow = Flow()
first_losses = train(flow, batches(8))
checkpoint = io.BytesIO()
torch.save(flow.state_dict(), checkpoint)
checkpoint.seek(0)

resumed = Flow()
resumed.load_state_dict(torch.load(checkpoint))
resumed_losses = train(resumed, batches(6))

result = {"first_losses": torch.stack(first_losses), "resumed_losses": torch.stack(resumed_losses),
          "params": [p.detach().clone() for p in resumed.parameters()]}
