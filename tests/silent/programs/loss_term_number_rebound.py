"""VAE: the KL term is turned into a Python number for the log (`kl = float(kl)`) before the loss
is built, so it is added as a number and only the reconstruction term trains the encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Linear(6, 4)
decoder = nn.Linear(2, 6)
optimizer = torch.optim.SGD([*encoder.parameters(), *decoder.parameters()], lr=0.1)
data = torch.randn(10, 6)
noise = torch.randn(3, 10, 2)
kl_log = []
for step in range(3):
    mean, log_var = encoder(data).chunk(2, dim=1)
    z = mean + (0.5 * log_var).exp() * noise[step]
    reconstruction = F.mse_loss(decoder(z), data)
    kl = -0.5 * (1 + log_var - mean.pow(2) - log_var.exp()).sum(1).mean()
    kl = float(kl)  # PRIMARY
    loss = reconstruction + 0.1 * kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    kl_log.append(kl)
result = [p.detach().clone() for p in [*encoder.parameters(), *decoder.parameters()]] + [torch.tensor(kl_log)]
