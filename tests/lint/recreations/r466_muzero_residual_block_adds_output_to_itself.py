"""muzero-general's `ResidualBlock.forward` ends with `x += x` where the
block's input was meant (`out += identity`): the normalised output is
doubled in place and the skip connection is lost, so every block computes
`relu(2 * bn2(conv2(...)))` instead of `relu(bn2(conv2(...)) + x)`.
Nothing raises; the network and its gradients are those of a plain stack.
The fix keeps the input and adds it.
Buggy line: `x += x` in `ResidualBlock.forward`.
Source: https://github.com/werner-duvaud/muzero-general/issues/89"""
import torch
import torch.nn as nn


class ResidualBlock(nn.Module):
    def __init__(self, num_channels, fixed=False):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channels, num_channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(num_channels)
        self.conv2 = nn.Conv2d(num_channels, num_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(num_channels)
        self.fixed = fixed

    def forward(self, x):
        identity = x
        x = self.conv1(x)
        x = self.bn1(x)
        x = torch.nn.functional.relu(x)
        x = self.conv2(x)
        x = self.bn2(x)
        if self.fixed:
            x += identity
        else:
            x += x  # missed: no rule
        x = torch.nn.functional.relu(x)
        return x


def bug_shows():
    """The block's output differs from the residual block it was meant to be."""
    torch.manual_seed(0)
    block = ResidualBlock(2)
    x = torch.randn(1, 2, 4, 4)
    buggy = block(x)
    block.fixed = True
    correct = block(x)
    return not torch.allclose(buggy, correct)
