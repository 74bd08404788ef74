"""The SI-SNR loss masks a copy of the stage's estimate (`estimate.clone()` before the in-place
product), not the view that iterating the stacked stages gave.
Source: https://github.com/facebookresearch/svoice/issues/53."""
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)

BATCH, SPEAKERS, SAMPLES, STAGES, EPS = 3, 2, 400, 2, 1e-8


class MultiStageSeparator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv1d(1, 16, 5, padding=2)
        self.stages = nn.ModuleList(nn.Conv1d(16, 16, 5, padding=2) for _ in range(STAGES))
        self.decoder = nn.Conv1d(16, SPEAKERS, 5, padding=2)

    def forward(self, mixture):
        h = torch.relu(self.encoder(mixture.unsqueeze(1)))
        outputs = []
        for stage in self.stages:
            h = torch.relu(stage(h)) + h
            outputs.append(self.decoder(h))
        return torch.stack(outputs)


def si_snr_with_pit(source, estimate, lengths):
    mask = (torch.arange(SAMPLES)[None, :] < lengths[:, None]).float()[:, None, :]
    estimate = estimate.clone()
    estimate *= mask
    source = source - source.sum(-1, keepdim=True) / lengths[:, None, None]
    estimate = estimate - estimate.sum(-1, keepdim=True) / lengths[:, None, None]
    best = None
    for perm in itertools.permutations(range(SPEAKERS)):
        est = estimate[:, list(perm)]
        proj = (est * source).sum(-1, keepdim=True) * source / ((source ** 2).sum(-1, keepdim=True) + EPS)
        noise = est - proj
        snr = 10 * torch.log10((proj ** 2).sum(-1) / ((noise ** 2).sum(-1) + EPS) + EPS).mean(-1)
        best = snr if best is None else torch.maximum(best, snr)
    return -best.mean()


model = MultiStageSeparator()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
sources = torch.randn(BATCH, SPEAKERS, SAMPLES)
lengths = torch.tensor([SAMPLES, 350, 300])
sources = sources * (torch.arange(SAMPLES)[None, :] < lengths[:, None]).float()[:, None, :]
mixture = sources.sum(1)
losses = []
for step in range(3):
    estimates = model(mixture)
    loss = 0
    for stage, est in enumerate(estimates):
        loss = loss + (stage + 1) / STAGES * si_snr_with_pit(sources, est, lengths)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
