"""Vector-quantised latent action model (showlab/Olaf-World, lam/modules/blocks.py and
lam/modules/vq_lam.py): the quantiser returns the straight-through output `z_q = x + (z - x).detach()`
and the model computes its codebook loss on that output, `mse(z_q, z_e.detach())`. The codebook
lookup `z` appears only inside `.detach()`, so the codebook never receives a gradient and stays
at its initialisation; the term instead pushes the encoder. The reconstruction loss still goes
down, and nothing is raised.
Source: https://github.com/showlab/Olaf-World/issues/8 ("codebook never receives gradients (codebook
loss uses the straight-through output)"; the fix the report gives: compute the codebook loss on
the codebook lookup, as the VQ-VAE objective `||sg[z_e] - e||^2` defines it).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FRAME, LATENT, CODES, BATCH = 10, 4, 6, 8


class VectorQuantizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.codebook = nn.Embedding(CODES, LATENT)

    def forward(self, x):
        indices = torch.cdist(x.detach(), self.codebook.weight.detach()).argmin(dim=1)
        z = self.codebook(indices)
        z_q = x + (z - x).detach()
        return z_q, z, indices


class LatentActionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2 * FRAME, 16), nn.ReLU(), nn.Linear(16, LATENT))
        self.vq = VectorQuantizer()
        self.decoder = nn.Sequential(nn.Linear(FRAME + LATENT, 16), nn.ReLU(), nn.Linear(16, FRAME))

    def forward(self, frame, next_frame):
        z_e = self.encoder(torch.cat([frame, next_frame], dim=1))
        z_q, z, _ = self.vq(z_e)
        prediction = self.decoder(torch.cat([frame, z_q], dim=1))
        return prediction, z_e, z_q, z


model = LatentActionModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
frames = torch.randn(BATCH, FRAME)
next_frames = frames + 0.1 * torch.randn(BATCH, FRAME)

losses = []
for step in range(4):
    optimizer.zero_grad()
    prediction, z_e, z_q, z = model(frames, next_frames)
    recon_loss = F.mse_loss(prediction, next_frames)
    codebook_loss = F.mse_loss(z_q, z_e.detach())
    commit_loss = F.mse_loss(z_e, z_q.detach())
    loss = recon_loss + codebook_loss + 0.25 * commit_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
