"""Near twin of b7: each head gets its own copy of the features, so the
shifts never touch what the other head's linear layer kept.  Silent; runs."""
import torch
import torch.nn as nn


class ShiftHead(nn.Module):
    def __init__(self, dim=4, out=2):
        super().__init__()
        self.offset = nn.Parameter(torch.zeros(dim))
        self.lin = nn.Linear(dim, out)

    def forward(self, feats):
        feats += self.offset
        return self.lin(feats)


class TwoHeads(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.cls = ShiftHead(dim, 3)
        self.reg = ShiftHead(dim, 1)

    def forward(self, x):
        feats = self.enc(x)
        logits = self.cls(feats.clone())
        value = self.reg(feats.clone())
        return logits.sum() + value.sum()


def run():
    torch.manual_seed(0)
    model = TwoHeads()
    model(torch.randn(2, 4)).backward()
    return [p.grad.clone() for p in model.parameters()]
