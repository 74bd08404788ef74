"""A latent dynamics model (a small JEPA / self-predictive representation): the encoder embeds two
consecutive observations and a predictor maps the first embedding to the second. The target
embedding is not detached, so the loss also pulls the target towards the prediction and the
encoder can make every embedding the same."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
predictor = nn.Linear(8, 8)
optimizer = torch.optim.Adam([*encoder.parameters(), *predictor.parameters()], lr=1e-2)
for _ in range(4):
    observations = torch.randn(32, 6)
    next_observations = observations + 0.1 * torch.randn(32, 6)
    latent = encoder(observations)
    target = encoder(next_observations)
    predicted = predictor(latent)
    loss = F.mse_loss(predicted, target)  # PRIMARY
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*encoder.parameters(), *predictor.parameters()]]
