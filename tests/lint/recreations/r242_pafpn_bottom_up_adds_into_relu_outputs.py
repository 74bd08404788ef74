"""MMDetection's PAFPN neck builds its bottom-up path with
`inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])`.
`inter_outs` are the outputs of the FPN convolutions, `ConvModule`s that end
in an activation when the config asks for one (`act_cfg=dict(type='ReLU')`):
the ReLU keeps its output for backward, and the in-place add into it makes
training fail at `loss.backward()` ("one of the variables needed for gradient
computation has been modified by an inplace operation ... output 0 of
ReluBackward0").  The fix adds out of place.
Buggy line: `inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])` in
`PAFPN.forward`.
Expected finding: ADL001 there.
Source: https://github.com/open-mmlab/mmdetection/pull/9450"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act_cfg=None):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.with_activation = act_cfg is not None
        if self.with_activation:
            self.activate = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, act_cfg=None):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i, channels in enumerate(in_channels):
            self.lateral_convs.append(ConvModule(channels, out_channels, 1, act_cfg=act_cfg))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg))
            if i > 0:
                self.downsample_convs.append(ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg))
                self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')
        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])  # missed: ADL001
        outs = [inter_outs[0]]
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i]) for i in range(1, used_backbone_levels)])
        return tuple(outs)


def run():
    torch.manual_seed(0)
    neck = PAFPN([4, 8, 16], 8, act_cfg=dict(type='ReLU'))
    optimizer = torch.optim.SGD(neck.parameters(), lr=0.01)
    feats = [torch.randn(1, 4, 16, 16), torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)]
    outs = neck(feats)
    loss = sum(o.pow(2).mean() for o in outs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
