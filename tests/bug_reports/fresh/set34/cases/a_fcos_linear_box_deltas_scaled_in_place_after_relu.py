"""detectron2, modeling/box_regression.py: while generalising `Box2BoxTransformLinear` (the FCOS
box transform, distances from an anchor's centre to the four edges) to non-square anchors, the
contributor first normalised the predicted distances in place, one slice of the `deltas` tensor at
a time (`deltas[:, 0::4] *= stride_w[:, None]` ...), right after `deltas = F.relu(deltas)`.
Training an FCOS head with the GIoU box loss then failed in backward with an autograd error "due to
in-place modification of sliced tensor (`deltas` for normalizing)": ReLU keeps its output for its
backward, and the slice writes change it. The merged version refactors the normalisation to be
autograd-safe: `strides = torch.stack([stride_w, stride_h, stride_w, stride_h], axis=1)` and
`deltas = deltas * strides`.
Source: https://github.com/facebookresearch/detectron2/pull/3522
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Box2BoxTransformLinear:
    def __init__(self, normalize_by_size=True):
        self.normalize_by_size = normalize_by_size

    def apply_deltas(self, deltas, boxes):
        # Ensure the output is a valid box (distances are non-negative).
        deltas = F.relu(deltas)
        boxes = boxes.to(deltas.dtype)

        ctr_x = 0.5 * (boxes[:, 0] + boxes[:, 2])
        ctr_y = 0.5 * (boxes[:, 1] + boxes[:, 3])
        if self.normalize_by_size:
            stride_w = boxes[:, 2] - boxes[:, 0]
            stride_h = boxes[:, 3] - boxes[:, 1]
            deltas[:, 0::4] *= stride_w[:, None]
            deltas[:, 1::4] *= stride_h[:, None]
            deltas[:, 2::4] *= stride_w[:, None]
            deltas[:, 3::4] *= stride_h[:, None]

        l = deltas[:, 0::4]
        t = deltas[:, 1::4]
        r = deltas[:, 2::4]
        b = deltas[:, 3::4]

        pred_boxes = torch.zeros_like(deltas)
        pred_boxes[:, 0::4] = ctr_x[:, None] - l
        pred_boxes[:, 1::4] = ctr_y[:, None] - t
        pred_boxes[:, 2::4] = ctr_x[:, None] + r
        pred_boxes[:, 3::4] = ctr_y[:, None] + b
        return pred_boxes


def giou_loss(boxes1, boxes2, eps=1e-7):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)
    intsct = torch.where((ykis2 > ykis1) & (xkis2 > xkis1), (xkis2 - xkis1) * (ykis2 - ykis1), torch.zeros_like(x1))
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsct
    iou = intsct / (union + eps)
    area_c = (torch.max(x2, x2g) - torch.min(x1, x1g)) * (torch.max(y2, y2g) - torch.min(y1, y1g))
    return (1 - (iou - (area_c - union) / (area_c + eps))).sum()


class FCOSHead(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.GroupNorm(2, channels), nn.ReLU())
        self.bbox_pred = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, feature):
        reg = self.bbox_pred(self.tower(feature))  # N, 4, H, W
        return reg.permute(0, 2, 3, 1).reshape(reg.shape[0], -1, 4)


def make_anchors(h, w, stride=8.0, size=16.0):
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
    cx = (xs.reshape(-1) + 0.5) * stride
    cy = (ys.reshape(-1) + 0.5) * stride
    return torch.stack([cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2], dim=1)


head = FCOSHead()
box2box_transform = Box2BoxTransformLinear(normalize_by_size=True)
optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
anchors = make_anchors(4, 4)

losses = []
for it in range(3):
    features = torch.randn(2, 8, 4, 4)
    gt_boxes = anchors[None] + torch.randn(2, anchors.shape[0], 4) * 2.0
    fg_mask = torch.rand(2, anchors.shape[0]) > 0.5
    pred_anchor_deltas = head(features)
    pred_boxes = [box2box_transform.apply_deltas(k, anchors) for k in pred_anchor_deltas]
    loss_box_reg = giou_loss(torch.stack(pred_boxes)[fg_mask], gt_boxes[fg_mask]) / max(1, int(fg_mask.sum()))
    optimizer.zero_grad()
    loss_box_reg.backward()
    optimizer.step()
    losses.append(loss_box_reg.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in head.parameters()]}
