"""MMOCR's FPEM_FFM neck (PANet, PSENet): after the first FPEM the fused
features are the FPEM's own outputs (`c2_ffm = c2`), which the second FPEM then
reads and keeps for backward; `c2_ffm += c2` after the second FPEM overwrites
them ("one of the variables needed for gradient computation has been modified
by an inplace operation" when training PSENet and PANet).
Source: https://github.com/open-mmlab/mmocr/pull/884"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FPEM(nn.Module):
    def __init__(self, in_channels=8):
        super().__init__()
        self.up_add1 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add2 = SeparableConv2d(in_channels, in_channels, 1)
        self.down_add1 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add2 = SeparableConv2d(in_channels, in_channels, 2)

    def forward(self, c2, c3, c4):
        c3 = self.up_add1(self._upsample_add(c4, c3))
        c2 = self.up_add2(self._upsample_add(c3, c2))
        c3 = self.down_add1(self._upsample_add(c3, c2))
        c4 = self.down_add2(self._upsample_add(c4, c3))
        return c2, c3, c4

    def _upsample_add(self, x, y):
        return F.interpolate(x, size=y.size()[2:]) + y


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, stride=stride, groups=in_channels)
        self.pointwise_conv = nn.Conv2d(in_channels, out_channels, 1)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.pointwise_conv(self.depthwise_conv(x))))


class FPEM_FFM(nn.Module):
    def __init__(self, in_channels=(4, 6, 8), conv_out=8, fpem_repeat=2):
        super().__init__()
        self.reduce_conv_c2 = nn.Sequential(nn.Conv2d(in_channels[0], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c3 = nn.Sequential(nn.Conv2d(in_channels[1], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c4 = nn.Sequential(nn.Conv2d(in_channels[2], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.fpems = nn.ModuleList()
        for _ in range(fpem_repeat):
            self.fpems.append(FPEM(conv_out))

    def forward(self, x):
        c2, c3, c4 = x
        c2 = self.reduce_conv_c2(c2)
        c3 = self.reduce_conv_c3(c3)
        c4 = self.reduce_conv_c4(c4)
        for i, fpem in enumerate(self.fpems):
            c2, c3, c4 = fpem(c2, c3, c4)
            if i == 0:
                c2_ffm = c2
                c3_ffm = c3
                c4_ffm = c4
            else:
                c2_ffm += c2  # missed: ADL001
                c3_ffm += c3
                c4_ffm += c4
        c4 = F.interpolate(c4_ffm, c2_ffm.size()[-2:], mode="bilinear", align_corners=False)
        c3 = F.interpolate(c3_ffm, c2_ffm.size()[-2:], mode="bilinear", align_corners=False)
        return torch.cat([c2_ffm, c3, c4], dim=1)


def run():
    torch.manual_seed(0)
    neck = FPEM_FFM()
    head = nn.Conv2d(24, 2, 1)
    optimizer = torch.optim.SGD(list(neck.parameters()) + list(head.parameters()), lr=0.01)
    feats = (torch.randn(2, 4, 16, 16), torch.randn(2, 6, 8, 8), torch.randn(2, 8, 4, 4))
    loss = head(neck(feats)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
