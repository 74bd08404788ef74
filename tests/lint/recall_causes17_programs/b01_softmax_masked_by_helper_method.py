"""Cause 1 (ADL001, r624/r641): a same-class helper method masks the softmax
weights in place under `if fill is not None` (`fill` read from `self`); the
forward hands it the softmax output, which SoftmaxBackward0 keeps."""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=8, pad_value=None):
        super().__init__()
        self.qk = nn.Linear(dim, 2 * dim)
        self.pad_value = pad_value

    def suppress(self, weights, pad):
        fill = self.pad_value
        if fill is not None:
            weights[pad] = fill
        return weights

    def forward(self, x, pad):
        q, k = self.qk(x).chunk(2, dim=-1)
        weights = torch.softmax(q @ k.transpose(1, 2), dim=-1)
        weights = self.suppress(weights, pad)  # bug
        return weights @ x


def step(model, opt, x, pad):
    out = model(x, pad).sum()
    opt.zero_grad()
    out.backward()
    opt.step()


def run():
    torch.manual_seed(0)
    model = Attention(8, pad_value=0.0)
    pad = torch.zeros(2, 3, 3, dtype=torch.bool)
    pad[..., 2] = True
    step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(2, 3, 8), pad)
