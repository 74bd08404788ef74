"""Denoising diffusion on 1-D signals: the user turns the raw data into the network's channel
layout with a `Conv1d` once, before the training loop, and feeds that tensor to every step; its
graph (through the conv's weight) is freed by the first `backward()`.
Source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/109 ("Trying to backward
through the graph a second time"; the reporter: "I use a conv1D() to convert my data to the shape
of the network's input, which is out of the training loop"; fixed by doing it inside the loop).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 50
betas = torch.linspace(1e-4, 0.02, T)
alphas_cumprod = torch.cumprod(1 - betas, dim=0)


class Denoiser(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(channels + 1, 16, 3, padding=1), nn.SiLU(),
                                 nn.Conv1d(16, channels, 3, padding=1))

    def forward(self, x, t):
        t_channel = (t.float() / T).view(-1, 1, 1).expand(-1, 1, x.shape[-1])
        return self.net(torch.cat([x, t_channel], dim=1))


to_channels = nn.Conv1d(1, 4, 1)
model = Denoiser()
optimizer = torch.optim.Adam(list(model.parameters()) + list(to_channels.parameters()), lr=1e-3)
raw = torch.randn(8, 1, 32)
losses = []
for step in range(3):
    data = to_channels(raw)
    t = torch.randint(0, T, (8,))
    noise = torch.randn_like(data)
    a = alphas_cumprod[t].view(-1, 1, 1)
    x_t = a.sqrt() * data + (1 - a).sqrt() * noise
    loss = F.mse_loss(model(x_t, t), noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
