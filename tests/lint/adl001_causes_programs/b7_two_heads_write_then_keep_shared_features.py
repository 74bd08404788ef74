"""Two heads share the encoder's features; each head's forward shifts its input
in place (`feats += self.offset`) and then feeds it to a linear layer, which
keeps it for the weight's gradient.  The second head's shift changes what the
first head's linear layer kept: backward() raises."""
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
        logits = self.cls(feats)
        value = self.reg(feats)  # ADL001
        return logits.sum() + value.sum()


def run():
    torch.manual_seed(0)
    model = TwoHeads()
    model(torch.randn(2, 4)).backward()
    return [p.grad.clone() for p in model.parameters()]
