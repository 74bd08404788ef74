"""A notebook of deep-learning notes on leaf tensors and `detach()` shows
that `detach_()` is not `detach()`: `m = q * 3`, `n = m.detach_()
.requires_grad_(True)`, `p = n * 2`, `p.backward()`, `m.backward()` -- and
then `q.grad` is None: "the original tensor's graph is destroyed".
Re-created as a two-head model: the auxiliary head is meant to get a
detached copy of the shared features, but `detach_()` detaches the features
themselves, so the main loss no longer reaches the encoder.  Nothing raises;
the encoder never gets a gradient.
Buggy line: `aux_in = feats.detach_()`.
Source: https://github.com/gsbnn/dplearning-pytroch"""
import torch
import torch.nn as nn


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.main_head = nn.Linear(8, 1)
        self.aux_head = nn.Linear(8, 1)

    def forward(self, x):
        feats = self.encoder(x)
        aux_in = feats.detach_()  # missed: no rule (detach_ of a value used afterwards with its graph)
        return self.main_head(feats), self.aux_head(aux_in)


def train_step(model, x, y):
    main, aux = model(x)
    loss = ((main - y) ** 2).mean() + 0.1 * ((aux - y) ** 2).mean()
    loss.backward()
    return model.encoder.weight.grad


def bug_shows():
    """The encoder gets no gradient although the main loss depends on it."""
    torch.manual_seed(0)
    grad = train_step(TwoHead(), torch.randn(6, 4), torch.randn(6, 1))
    return grad is None
