"""MMOCR's FPNF neck (the feature fusion of PSENet): every lateral is a ConvModule (conv, BN,
ReLU with `inplace=False`), and the top-down path adds the upsampled coarser level into the finer
one with `laterals[i - 1] += F.interpolate(laterals[i], ...)`. The finer lateral is the output of
its ReLU, which ReLU keeps for its backward, so training PSENet fails at `loss.backward()` with
"one of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [...]], which is output 0 of ReluBackward0". The merged fix writes the sum out
of place: `laterals[i - 1] = laterals[i - 1] + F.interpolate(...)`.
Source: https://github.com/open-mmlab/mmocr/pull/1018
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__(nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU(inplace=False))


class FPNF(nn.Module):
    """FPN-like fusion of four backbone levels, concatenated at the finest resolution."""

    def __init__(self, in_channels=(8, 16, 32, 64), out_channels=8):
        super().__init__()
        self.lateral_convs = nn.ModuleList(ConvModule(c, out_channels, 1) for c in in_channels)
        self.fpn_convs = nn.ModuleList(ConvModule(out_channels, out_channels, 3, padding=1)
                                       for _ in in_channels[:-1])
        self.output_convs = ConvModule(out_channels * len(in_channels), out_channels, 3, padding=1)

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode='nearest')
            laterals[i - 1] = self.fpn_convs[i - 1](laterals[i - 1])
        bottom_shape = laterals[0].shape[2:]
        for i in range(1, used_backbone_levels):
            laterals[i] = F.interpolate(laterals[i], size=bottom_shape, mode='nearest')
        out = torch.cat(laterals, 1)
        return self.output_convs(out)


neck = FPNF()
head = nn.Conv2d(8, 2, 1)
optimizer = torch.optim.SGD(list(neck.parameters()) + list(head.parameters()), lr=0.05)
losses = []
for step in range(3):
    feats = [torch.randn(2, c, 32 // 2 ** k, 32 // 2 ** k) for k, c in enumerate((8, 16, 32, 64))]
    gt_kernels = (torch.rand(2, 2, 32, 32) > 0.5).float()
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(head(neck(feats)), gt_kernels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in neck.parameters()]}
