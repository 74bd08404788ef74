"""MMDetection's Hybrid Task Cascade has a fused semantic head: it takes the
feature map of one FPN level through a lateral `ConvModule`, then adds the
other levels into it, resized: `x += self.lateral_convs[i](feat)`.  A
`ConvModule` is conv + norm + activation, and its default activation is a
ReLU, which keeps its output for the backward pass; the `+=` writes that
output in place, and the backward pass fails ("one of the variables needed
for gradient computation has been modified by an inplace operation").  The
fix is `x = x + self.lateral_convs[i](feat)`.
Buggy line: `x += self.lateral_convs[i](feat)` in `FusedSemanticHead.forward`.
Expected finding: ADL001 there.
Source: https://github.com/open-mmlab/mmdetection/pull/8083"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    """conv / norm / activation, as mmcv builds it from its config dicts."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, norm_cfg=None,
                 act_cfg=dict(type="ReLU")):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding,
                              bias=norm_cfg is None)
        self.norm = nn.BatchNorm2d(out_channels) if norm_cfg is not None else None
        self.activate = nn.ReLU() if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class FusedSemanticHead(nn.Module):
    def __init__(self, num_ins=3, fusion_level=1, in_channels=4, conv_out_channels=4,
                 num_classes=3):
        super().__init__()
        self.num_ins = num_ins
        self.fusion_level = fusion_level
        self.lateral_convs = nn.ModuleList(
            ConvModule(in_channels, in_channels, 1) for _ in range(num_ins))
        self.conv_embedding = ConvModule(conv_out_channels, conv_out_channels, 1)
        self.conv_logits = nn.Conv2d(conv_out_channels, num_classes, 1)

    def forward(self, feats):
        x = self.lateral_convs[self.fusion_level](feats[self.fusion_level])
        fused_size = tuple(x.shape[-2:])
        for i, feat in enumerate(feats):
            if i != self.fusion_level:
                feat = F.interpolate(feat, size=fused_size, mode="bilinear", align_corners=True)
                x += self.lateral_convs[i](feat)  # missed: ADL001
        mask_pred = self.conv_logits(x)
        x = self.conv_embedding(x)
        return mask_pred, x


def run():
    torch.manual_seed(0)
    head = FusedSemanticHead()
    feats = [torch.randn(2, 4, 16 // 2 ** i, 16 // 2 ** i) for i in range(3)]
    labels = torch.randint(0, 3, (2, 8, 8))
    mask_pred, semantic_feat = head(feats)
    loss = F.cross_entropy(mask_pred, labels) + semantic_feat.mean()
    loss.backward()
