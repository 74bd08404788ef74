"""A user converting an Xception backbone (DeepLab's) to InPlace-ABN got
"one of the variables needed for gradient computation has been modified by
an inplace operation" and posted the block: one shared `self.relu =
nn.ReLU(inplace=True)` is the first module of `self.rep` when
`start_with_relu` is set, and `forward` runs `x = self.rep(inp)` and then
uses `inp` again for the residual (`skip = inp`, or `self.skip(inp)`).  The
in-place ReLU has already overwritten `inp`: the residual branch adds
relu(inp) instead of inp.  With InPlace-ABN before the block (which saves its
output for backward) this raises; with plain BatchNorm, which saves its
input instead, nothing raises and the block silently computes a different
function from the architecture.
Buggy line: `x = self.rep(inp)` followed by `skip = inp` (the in-place
ReLU at the head of `self.rep` rewrites `inp`).
Source: https://github.com/mapillary/inplace_abn/issues/40"""
import torch
import torch.nn as nn


class SeparableConv2d(nn.Module):
    def __init__(self, inplanes, planes, kernel_size=3, stride=1, dilation=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, inplanes, kernel_size, stride, dilation, dilation=dilation,
                               groups=inplanes, bias=False)
        self.pointwise = nn.Conv2d(inplanes, planes, 1, bias=False)

    def forward(self, x):
        return self.pointwise(self.conv1(x))


class Block(nn.Module):
    def __init__(self, inplanes, planes, reps, stride=1, dilation=1, start_with_relu=True,
                 grow_first=True, inplace=True):
        super().__init__()
        if planes != inplanes or stride != 1:
            self.skip = nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False)
            self.skipbn = nn.BatchNorm2d(planes)
        else:
            self.skip = None

        self.relu = nn.ReLU(inplace=inplace)
        rep = []
        filters = inplanes
        if grow_first:
            rep.append(self.relu)
            rep.append(SeparableConv2d(inplanes, planes, 3, stride=1, dilation=dilation))
            rep.append(nn.BatchNorm2d(planes))
            filters = planes
        for i in range(reps - 1):
            rep.append(self.relu)
            rep.append(SeparableConv2d(filters, filters, 3, stride=1, dilation=dilation))
            rep.append(nn.BatchNorm2d(filters))
        if not start_with_relu:
            rep = rep[1:]
        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)  # missed: ADL002
        if self.skip is not None:
            skip = self.skipbn(self.skip(inp))
        else:
            skip = inp
        x = x + skip
        return x


class EntryFlow(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.block1 = Block(8, 8, reps=2, start_with_relu=True, inplace=inplace)

    def forward(self, x):
        return self.block1(self.bn1(self.conv1(x)))


def bug_shows():
    """The block with the in-place ReLU computes a different function from
    the same weights with an out-of-place ReLU: its residual branch added
    relu(inp), not inp."""
    torch.manual_seed(0)
    buggy = EntryFlow(inplace=True)
    reference = EntryFlow(inplace=False)
    reference.load_state_dict(buggy.state_dict())
    x = torch.randn(2, 3, 8, 8)
    out = buggy(x)
    out.sum().backward()
    return not torch.allclose(out, reference(x))
