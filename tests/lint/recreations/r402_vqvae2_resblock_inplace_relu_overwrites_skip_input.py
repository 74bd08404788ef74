"""rosinality's vq-vae-2-pytorch: `ResBlock.conv` starts with
`nn.ReLU(inplace=True)`, and `forward` adds the block's input back,
`out += input`.  The in-place ReLU has already overwritten `input` (the
previous convolution's output), so the skip connection adds relu(input)
instead of the pre-activation input the design intends.  Nothing raises (the
convolution before does not save its output); the values are wrong.  The fix
uses `nn.ReLU()` at the start of the stack.
Buggy line: `nn.ReLU(inplace=True)` at the start of `ResBlock.conv`.
Source: https://github.com/rosinality/vq-vae-2-pytorch/issues/60"""
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, in_channel, channel):
        super().__init__()
        self.conv = nn.Sequential(
            nn.ReLU(inplace=True),  # missed: ADL002
            nn.Conv2d(in_channel, channel, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(channel, in_channel, 1),
        )

    def forward(self, input):
        out = self.conv(input)
        out += input
        return out


class Encoder(nn.Module):
    def __init__(self, in_channel=3, channel=8, n_res_block=1, n_res_channel=4):
        super().__init__()
        blocks = [nn.Conv2d(in_channel, channel, 3, padding=1)]
        for _ in range(n_res_block):
            blocks.append(ResBlock(channel, n_res_channel))
        self.blocks = nn.Sequential(*blocks)

    def forward(self, input):
        return self.blocks(input)


def bug_shows():
    """The block's output differs from conv(x) + x, x the pre-activation input."""
    torch.manual_seed(0)
    encoder = Encoder()
    image = torch.randn(1, 3, 5, 5)
    out = encoder(image)
    with torch.no_grad():
        pre = encoder.blocks[0](image)
        expected = encoder.blocks[1].conv(pre.clone()) + pre
    return not torch.allclose(out, expected)
