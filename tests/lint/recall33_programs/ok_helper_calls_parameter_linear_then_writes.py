"""Correct near twin of r685's shape: the helper returns the result of calling its
module parameter, but the module the caller passes ends in a `Linear` (which keeps
its input, not its output); zeroing the padding row of that result in place is
safe.  ADL001 silent."""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.W_a = nn.Linear(dim, dim)
        self.output = nn.Sequential(nn.ReLU(), nn.Linear(dim, dim))

    def mpn(self, h, W_m, W_n):
        messages = torch.relu(W_m(h))
        node_vecs = W_n(messages)
        return node_vecs, messages

    def forward(self, x):
        hatom, _ = self.mpn(x, self.W_a, self.output)
        hatom[0, :] = hatom[0, :] * 0
        return hatom


def run():
    torch.manual_seed(0)
    model = Encoder()
    loss = model(torch.randn(5, 4)).pow(2).sum()
    loss.backward()
    return model.W_a.weight.grad.clone()
