"""A user's spatially weighted feature block (reported in a PyTorch issue
thread): the network multiplies one quadrant of its feature map by a
learned factor and writes the product back into the same slice,
`x11[:, :, 0:w/2, 0:h/2] = x11[:, :, 0:w/2, 0:h/2] * xx1[0]`.  The
multiplication keeps the slice (a view of `x11`) for the factor's
gradient, so `backward()` fails ("output 0 of AsStrided ... is at version
1; expected version 0"); the reporter's fix is `x11 = x11 * xx1[0]`, or a
product written into a new tensor.
Source: https://github.com/pytorch/pytorch/issues/1321 (comment of 2018-01-07)"""
import torch
import torch.nn as nn


class QuadrantWeighting(nn.Module):
    def __init__(self, channels=2):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3, padding=1)
        self.xx1 = nn.Parameter(torch.ones(4))
        self.head = nn.Linear(channels, 1)

    def forward(self, x):
        x11 = torch.tanh(self.conv(x))
        w_f, h_f = x11.shape[2], x11.shape[3]
        x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] = x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] * self.xx1[0]  # expect: ADL001
        return self.head(x11.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = QuadrantWeighting()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(2, 1, 4, 4), torch.randn(2, 1)
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
