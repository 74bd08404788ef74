import torch
from torch import nn

torch.manual_seed(0)
signal = torch.randn(2, 16)
window = nn.Parameter(torch.ones(8))
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([window, *head.parameters()], lr=0.1)
losses = []
for _ in range(2):
    frames = signal.unfold(-1, 8, 4)
    optimizer.zero_grad()
    frames = frames * window  # PRIMARY
    loss = head(frames).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
