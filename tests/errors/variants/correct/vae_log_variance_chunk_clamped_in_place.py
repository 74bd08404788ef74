import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(6, 8)

    def forward(self, x):
        mean, log_var = self.net(x).chunk(2, dim=-1)
        log_var = log_var.clamp(-4.0, 4.0)  # PRIMARY
        return mean, log_var


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = nn.Linear(4, 6)

    def forward(self, x, noise):
        mean, log_var = self.encoder(x)
        z = mean + noise * torch.exp(0.5 * log_var)
        kl = -0.5 * (1 + log_var - mean ** 2 - log_var.exp()).sum(-1).mean()
        return self.decoder(z), kl


torch.manual_seed(0)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(5, 6)
losses = []
for _ in range(2):
    noise = torch.randn(5, 4)
    optimizer.zero_grad()
    reconstruction, kl = model(x, noise)
    loss = ((reconstruction - x) ** 2).sum(-1).mean() + kl
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
