"""The RetinaNet implementation's `test()` checks that gradients flow through
the network: it runs one forward pass, then `loc_preds.backward(loc_grads)`
and `cls_preds.backward(cls_grads)`.  Both heads share the backbone and the
FPN, whose saved tensors the first backward frees, so the second fails
("Trying to backward through the graph a second time").  The fix passes
`retain_graph=True` to the first backward (or backpropagates both at once
with `torch.autograd.backward`).
Buggy line: `cls_preds.backward(cls_grads)` in `test`.
Expected finding: ADL019 there.
Source: https://github.com/kuangliu/pytorch-retinanet/issues/38"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.lateral = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        c1 = F.relu(self.conv1(x))
        c2 = F.relu(self.conv2(c1))
        p2 = self.lateral(c2)
        p1 = F.interpolate(p2, scale_factor=2) + c1
        return [p1, p2]


class RetinaNet(nn.Module):
    num_anchors = 3

    def __init__(self, num_classes=4):
        super().__init__()
        self.fpn = FPN()
        self.num_classes = num_classes
        self.loc_head = self._make_head(self.num_anchors * 4)
        self.cls_head = self._make_head(self.num_anchors * self.num_classes)

    def _make_head(self, out_planes):
        return nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, out_planes, 3, padding=1))

    def forward(self, x):
        fms = self.fpn(x)
        loc_preds, cls_preds = [], []
        for fm in fms:
            loc_pred = self.loc_head(fm).permute(0, 2, 3, 1).contiguous().view(x.size(0), -1, 4)
            cls_pred = self.cls_head(fm).permute(0, 2, 3, 1).contiguous().view(x.size(0), -1, self.num_classes)
            loc_preds.append(loc_pred)
            cls_preds.append(cls_pred)
        return torch.cat(loc_preds, 1), torch.cat(cls_preds, 1)


def test():
    net = RetinaNet()
    loc_preds, cls_preds = net(torch.randn(2, 3, 16, 16))
    print(loc_preds.size())
    print(cls_preds.size())
    loc_grads = torch.randn(loc_preds.size())
    cls_grads = torch.randn(cls_preds.size())
    loc_preds.backward(loc_grads)
    cls_preds.backward(cls_grads)  # expect: ADL019


def run():
    torch.manual_seed(0)
    test()
