"""WaveRNN vocoder: the upsampling network's smoothing convolution is initialized to a box filter
with `conv.weight.fill_(1. / k)` (the legacy `.data` was removed); an in-place write on a
parameter while autograd records is refused.
Source: https://github.com/pytorch/audio/pull/1993 ("conv.weight.fill_(1)": "a leaf Variable that
requires grad is being used in an in-place operation"; answer: "You can use
torch.nn.init.constant_(tensor, val) to initialize the conv.weight").
expect: raises"""
import torch
import torch.nn as nn


class Stretch(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x.repeat_interleave(self.k, dim=-1)


class UpsampleNetwork(nn.Module):
    def __init__(self, scale=3, k=5):
        super().__init__()
        self.stretch = Stretch(scale)
        self.conv = nn.Conv1d(1, 1, kernel_size=k, padding=k // 2, bias=False)
        nn.init.constant_(self.conv.weight, 1.0 / k)

    def forward(self, mel):
        return self.conv(self.stretch(mel).unsqueeze(1)).squeeze(1)


torch.manual_seed(0)
upsample = UpsampleNetwork()
head = nn.Linear(12, 12)
optimizer = torch.optim.Adam([*upsample.parameters(), *head.parameters()], lr=1e-3)
mel, wav = torch.randn(4, 4), torch.randn(4, 12)
losses = []
for step in range(3):
    loss = ((head(upsample(mel)) - wav) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "conv": upsample.conv.weight.detach()}
