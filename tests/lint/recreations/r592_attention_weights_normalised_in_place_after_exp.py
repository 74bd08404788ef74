"""A Chinese PyTorch introduction warns, with `a.exp()` and its in-place
form, that in-place operations "cause all kinds of bugs"; the standard one
is normalising the output of `exp` in place, which `exp`'s backward saves.
Re-created as an attention module that writes its own softmax
(`scores.exp()`, then `/=` the row sums) inside `forward`, and a training
loop over a toy sequence task.  Raises "modified by an inplace operation" at
the first backward.
Buggy line: `weights /= weights.sum(dim=-1, keepdim=True)` (writes the
output that `exp` saved).
Source: https://e-com-net.com/article/1721381009724878848.htm"""
import torch
import torch.nn as nn


class SimpleAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(-2, -1) * self.scale
        scores = scores - scores.amax(dim=-1, keepdim=True).detach()
        weights = scores.exp()
        weights /= weights.sum(dim=-1, keepdim=True)  # expect: ADL001
        return weights @ self.v(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SimpleAttention()
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.attn(x).mean(dim=1))


def run():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        x, y = torch.randn(4, 5, 8), torch.randn(4, 1)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
