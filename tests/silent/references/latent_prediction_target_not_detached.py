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
    loss = F.mse_loss(predicted, target.detach())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*encoder.parameters(), *predictor.parameters()]]
