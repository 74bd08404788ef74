"""ESPnet2 speech separation trained with two permutation-invariant losses: the first
`PITSolver` (SI-SNR, `independent_perm=True`) finds the best speaker permutation, the second
(spectral MSE, `independent_perm=False`) reuses it. With a permutation given, the second solver
assembles its loss with `torch.tensor([torch.tensor([...]).mean() for ...])`: new tensors built
from values, without a graph. The sum of the two losses still has the first one's graph, so
`backward()` runs and nothing is raised, but the spectral loss never contributes a gradient.
Source: https://github.com/espnet/espnet/pull/5974 ("fix: gradient truncation bug in
pit_solver.py": the per-utterance losses are stacked with `torch.stack`, keeping the graph).
expect: silent"""
from itertools import permutations

import torch
import torch.nn as nn

torch.manual_seed(0)


def si_snr_loss(ref, inf, eps=1e-8):
    ref = ref - ref.mean(dim=-1, keepdim=True)
    inf = inf - inf.mean(dim=-1, keepdim=True)
    projection = (inf * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    noise = inf - projection
    return -10 * torch.log10(projection.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


def spectrum_mse_loss(ref, inf):
    window = torch.hann_window(64)
    spec_ref = torch.stft(ref, 64, 16, window=window, return_complex=True).abs()
    spec_inf = torch.stft(inf, 64, 16, window=window, return_complex=True).abs()
    return (spec_ref - spec_inf).pow(2).mean(dim=(-1, -2))


class PITSolver(nn.Module):
    def __init__(self, criterion, weight=1.0, independent_perm=True):
        super().__init__()
        self.criterion = criterion
        self.weight = weight
        self.independent_perm = independent_perm

    def forward(self, ref, inf, others={}):
        perm = others["perm"] if "perm" in others else None
        num_spk = len(ref)

        def pair_loss(permutation):
            return sum([self.criterion(ref[s], inf[t]) for s, t in enumerate(permutation)]) / len(permutation)

        if self.independent_perm or perm is None:
            all_permutations = list(permutations(range(num_spk)))
            losses = torch.stack([pair_loss(p) for p in all_permutations], dim=1)
            loss, perm = torch.min(losses, dim=1)
            perm = torch.index_select(torch.tensor(all_permutations, dtype=torch.long), 0, perm)
        else:
            loss = torch.tensor(
                [
                    torch.tensor(
                        [
                            self.criterion(ref[s][batch].unsqueeze(0), inf[t][batch].unsqueeze(0))
                            for s, t in enumerate(p)
                        ]
                    ).mean()
                    for batch, p in enumerate(perm)
                ]
            )
        return loss.mean(), {"perm": perm}


class MaskSeparator(nn.Module):
    """Two speakers from a mixture: a mask per speaker over learned basis frames."""

    def __init__(self, n_spk=2, frame=32, n_basis=48):
        super().__init__()
        self.frame = frame
        self.encoder = nn.Conv1d(1, n_basis, frame, stride=frame // 2)
        self.masker = nn.Sequential(nn.Conv1d(n_basis, 64, 1), nn.ReLU(), nn.Conv1d(64, n_basis * n_spk, 1))
        self.decoder = nn.ConvTranspose1d(n_basis, 1, frame, stride=frame // 2)
        self.n_spk = n_spk

    def forward(self, mixture):
        feats = torch.relu(self.encoder(mixture.unsqueeze(1)))
        masks = torch.sigmoid(self.masker(feats)).chunk(self.n_spk, dim=1)
        return [self.decoder(feats * m).squeeze(1)[..., : mixture.shape[-1]] for m in masks]


t = torch.arange(1024) / 8000.0
speakers = [torch.sin(2 * torch.pi * f * t)[None] * (0.5 + torch.rand(4, 1)) for f in (220.0, 587.0)]
mixture = speakers[0] + speakers[1]
model = MaskSeparator()
loss_wrappers = [
    PITSolver(si_snr_loss, weight=1.0, independent_perm=True),
    PITSolver(spectrum_mse_loss, weight=1.0, independent_perm=False),
]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(4):
    optimizer.zero_grad()
    estimates = model(mixture)
    loss, others = 0.0, {}
    for wrapper in loss_wrappers:
        current, others = wrapper(speakers, estimates, others)
        loss = loss + wrapper.weight * current
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
