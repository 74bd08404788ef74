"""A layer's forward adds 1 to each row of `b = torch.mm(self.param, a)` by
index assignment in a loop and multiplies `self.param` by `b` again inside the
same loop; the second `mm` keeps `b` for backward, and the next iteration's
`b[i] = b[i] + 1` overwrites it ("modified by an inplace operation").  The
post's fixes build `b = b + bione` out of place or `clone()` it.
Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html"""
import torch
import torch.nn as nn


class RowShiftLayer(nn.Module):
    def __init__(self, size=10):
        super().__init__()
        self.param = nn.Parameter(torch.randn(size, size) * 0.1)

    def forward(self, a):
        y = 0
        b = torch.mm(self.param, a)
        for i in range(b.shape[0]):
            b[i] = b[i] + 1  # expect: ADL001
            y = y + torch.mm(self.param, b)
        return y


def run():
    torch.manual_seed(0)
    layer = RowShiftLayer()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
    out = layer(torch.randn(10, 1))
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
