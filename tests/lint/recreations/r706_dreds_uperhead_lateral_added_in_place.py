"""DREDS / SwinDRNet (depth restoration), issue 6: `python train.py` raises at
`self.loss_train_iter.backward()`: "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.cuda.FloatTensor [8, 512, 14, 14]], which is
output 0 of ReluBackward0".  The decoder's `UPerHead.forward` builds `laterals = [lateral_conv(
inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]`, appends the PSP branch, and
then walks the top-down path adding each coarser level into the finer one in place:
`laterals[i - 1] += resize(laterals[i], ...)`.  Every lateral is the output of a `ConvModule`
whose `forward` loops over `('conv', 'norm', 'act')` and ends in `nn.ReLU(inplace)`; the ReLU
saved that output, so the in-place add breaks the backward.
Re-created in my own words with `ConvModule` (its order loop and flags), the PPM branch,
`UPerHead` with its lateral and FPN convolutions, small channels and a 3-level pyramid.
Buggy line: `laterals[i - 1] += resize(...)`.
Source: https://github.com/PKU-EPIC/DREDS/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def resize(input, size=None, mode='nearest', align_corners=None):
    return F.interpolate(input, size, None, mode, align_corners)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=True, order=('conv', 'norm', 'act')):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace)
        self.order = order

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == 'conv':
                x = self.conv(x)
            elif layer == 'norm' and norm:
                x = self.bn(x)
            elif layer == 'act' and activate:
                x = self.activate(x)
        return x


class PPM(nn.ModuleList):
    def __init__(self, pool_scales, in_channels, channels):
        super().__init__()
        for pool_scale in pool_scales:
            self.append(nn.Sequential(nn.AdaptiveAvgPool2d(pool_scale), ConvModule(in_channels, channels, 1)))

    def forward(self, x):
        return [resize(ppm(x), size=x.size()[2:], mode='bilinear', align_corners=False) for ppm in self]


class UPerHead(nn.Module):
    def __init__(self, pool_scales=(1, 2), num_classes=3, in_channels=(4, 8, 16), channels=8):
        super().__init__()
        self.in_channels = in_channels
        self.psp_modules = PPM(pool_scales, in_channels[-1], channels)
        self.bottleneck = ConvModule(in_channels[-1] + len(pool_scales) * channels, channels, 3, padding=1)
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_ch in in_channels[:-1]:
            self.lateral_convs.append(ConvModule(in_ch, channels, 1, inplace=False))
            self.fpn_convs.append(ConvModule(channels, channels, 3, padding=1, inplace=False))
        self.fpn_bottleneck = ConvModule(len(in_channels) * channels, channels, 3, padding=1)
        self.conv_seg = nn.Conv2d(channels, num_classes, kernel_size=1)

    def psp_forward(self, inputs):
        x = inputs[-1]
        psp_outs = [x]
        psp_outs.extend(self.psp_modules(x))
        return self.bottleneck(torch.cat(psp_outs, dim=1))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        laterals.append(self.psp_forward(inputs))
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += resize(laterals[i], size=prev_shape, mode='bilinear', align_corners=False)  # missed: ADL001, an element of a list of module outputs (a comprehension) whose class applies nn.ReLU in an order loop
        fpn_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels - 1)]
        fpn_outs.append(laterals[-1])
        for i in range(used_backbone_levels - 1, 0, -1):
            fpn_outs[i] = resize(fpn_outs[i], size=fpn_outs[0].shape[2:], mode='bilinear', align_corners=False)
        output = self.fpn_bottleneck(torch.cat(fpn_outs, dim=1))
        return self.conv_seg(output)


def run():
    torch.manual_seed(0)
    head = UPerHead()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
    inputs = [torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4)]
    target = torch.randint(0, 3, (2, 16, 16))
    loss = F.cross_entropy(head(inputs), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
