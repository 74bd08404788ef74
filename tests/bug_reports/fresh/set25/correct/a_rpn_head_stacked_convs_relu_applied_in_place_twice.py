"""Cascade/Mask R-CNN with a two-conv RPN head (mmdetection, `rpn_head=dict(num_convs=2)` as in
the simple copy-paste configs): with `num_convs > 1`, `RPNHead._init_layers` stacks mmcv
`ConvModule`s, whose ReLU runs in place by default, and `forward_single` then applies
`F.relu(x, inplace=True)` to the stack's output as it does for the single plain conv. The second
in-place ReLU overwrites the output the ConvModule's ReLU saved for its backward, and backward()
raises "one of the variables needed for gradient computation has been modified by an inplace
operation". The fix given in the thread applies the head's ReLU out of place
(`x = F.relu(x, inplace=False)` in `forward_single`, "the following fix resolves the error"), as
mmdetection's rpn_head.py now does, with a comment on the stacked convs: "use ``inplace=False`` to
avoid error: one of the variables needed for gradient computation has been modified by an inplace
operation".
Source: https://github.com/open-mmlab/mmdetection/issues/7933
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    """Conv + activation, as mmcv builds it (the activation runs in place unless told not to)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.conv(x))


class RPNHead(nn.Module):
    def __init__(self, in_channels, feat_channels, num_anchors=3, num_convs=1):
        super().__init__()
        self.in_channels = in_channels
        self.feat_channels = feat_channels
        self.num_anchors = num_anchors
        self.num_convs = num_convs
        self._init_layers()

    def _init_layers(self):
        if self.num_convs > 1:
            rpn_convs = []
            for i in range(self.num_convs):
                in_channels = self.in_channels if i == 0 else self.feat_channels
                rpn_convs.append(
                    ConvModule(in_channels, self.feat_channels, 3, padding=1))
            self.rpn_conv = nn.Sequential(*rpn_convs)
        else:
            self.rpn_conv = nn.Conv2d(self.in_channels, self.feat_channels, 3, padding=1)
        self.rpn_cls = nn.Conv2d(self.feat_channels, self.num_anchors, 1)
        self.rpn_reg = nn.Conv2d(self.feat_channels, self.num_anchors * 4, 1)

    def forward_single(self, x):
        x = self.rpn_conv(x)
        x = F.relu(x, inplace=False)
        return self.rpn_cls(x), self.rpn_reg(x)

    def forward(self, feats):
        return [self.forward_single(x) for x in feats]

    def loss(self, outputs, targets):
        total = 0.0
        for (cls_score, bbox_pred), (labels, bbox_targets) in zip(outputs, targets):
            total = total + F.binary_cross_entropy_with_logits(cls_score, labels)
            weights = labels.repeat_interleave(4, dim=1)
            total = total + (F.smooth_l1_loss(bbox_pred, bbox_targets, reduction="none") * weights).sum() / (weights.sum() + 1.0)
        return total


class TinyFPN(nn.Module):
    def __init__(self, out_channels=8):
        super().__init__()
        self.c3 = nn.Conv2d(3, out_channels, 3, stride=2, padding=1)
        self.c4 = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, img):
        p3 = F.relu(self.c3(img))
        p4 = F.relu(self.c4(p3))
        return [p3, p4]


def make_targets(feats, num_anchors=3):
    targets = []
    for feat in feats:
        n, _, h, w = feat.shape
        labels = (torch.rand(n, num_anchors, h, w) > 0.8).float()
        targets.append((labels, torch.randn(n, num_anchors * 4, h, w) * 0.1))
    return targets


neck = TinyFPN()
rpn_head = RPNHead(in_channels=8, feat_channels=8, num_convs=2)
optimizer = torch.optim.SGD(list(neck.parameters()) + list(rpn_head.parameters()), lr=0.02, momentum=0.9)
images = [torch.randn(2, 3, 16, 16) for _ in range(3)]
with torch.no_grad():
    all_targets = [make_targets(neck(img)) for img in images]

losses = []
for img, targets in zip(images, all_targets):
    loss = rpn_head.loss(rpn_head(neck(img)), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "rpn_head": [p.detach().clone() for p in rpn_head.parameters()],
    "neck": [p.detach().clone() for p in neck.parameters()],
}
