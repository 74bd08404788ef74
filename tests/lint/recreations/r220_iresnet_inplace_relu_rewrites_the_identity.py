"""iResNet's building blocks keep the block input as the shortcut
(`identity = x`) and, in the blocks without a leading batch norm, apply
`self.relu = nn.ReLU(inplace=True)` directly to the input: `out =
self.relu(x)` writes the ReLU into `x` itself, so `identity` is `ReLU(x)`
instead of `x` and the main propagation path gets a ReLU the paper's design
does not have.  Nothing raises; the network silently computes a different
function.  The fix builds the ReLU without `inplace=True` in those blocks.
Buggy line: `out = self.relu(x)` in `BasicBlock.forward` (the ReLU is in
place, and `x` is still used as the identity).
Expected finding: ADL002 there (opt-in).
Source: https://github.com/iduta/iresnet/pull/2"""
import torch
import torch.nn as nn


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, start_block=False, end_block=False,
                 exclude_bn0=False, inplace=True):
        super(BasicBlock, self).__init__()
        if not start_block and not exclude_bn0:
            self.bn0 = nn.BatchNorm2d(inplanes)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv2 = conv3x3(planes, planes)
        if start_block:
            self.bn2 = nn.BatchNorm2d(planes)
        if end_block:
            self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.start_block = start_block
        self.end_block = end_block
        self.exclude_bn0 = exclude_bn0

    def forward(self, x):
        identity = x
        if self.start_block:
            out = self.conv1(x)
        elif self.exclude_bn0:
            out = self.relu(x)  # missed: ADL002
            out = self.conv1(out)
        else:
            out = self.bn0(x)
            out = self.relu(out)
            out = self.conv1(out)

        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)

        if self.start_block:
            out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity

        if self.end_block:
            out = self.bn2(out)
            out = self.relu(out)

        return out


class iResNetStage(nn.Module):
    def __init__(self, planes=4, inplace=True):
        super().__init__()
        self.stem = nn.Conv2d(3, planes, 3, padding=1)
        self.start = BasicBlock(planes, planes, start_block=True, inplace=inplace)
        self.middle = BasicBlock(planes, planes, exclude_bn0=True, inplace=inplace)
        self.end = BasicBlock(planes, planes, end_block=True, inplace=inplace)

    def forward(self, x):
        return self.end(self.middle(self.start(self.stem(x))))


def bug_shows():
    """The in-place blocks compute a different function from the same weights."""
    torch.manual_seed(0)
    buggy = iResNetStage(inplace=True).eval()
    reference = iResNetStage(inplace=False).eval()
    reference.load_state_dict(buggy.state_dict())
    images = torch.randn(2, 3, 6, 6)
    return not torch.allclose(buggy(images), reference(images))


def run():
    torch.manual_seed(0)
    model = iResNetStage()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, target in [(torch.randn(2, 3, 6, 6), torch.randn(2, 4, 6, 6))]:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(images), target).backward()
        optimizer.step()
