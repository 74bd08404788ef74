"""Rotated-box regression with the DIoU penalty of `Rotated_IoU`: the smallest box enclosing a
prediction and its target is found by trying every line through two of their eight corners
(`min_enclosing_box.py`), and each line's length is `num = torch.sqrt((y2-y1).square() +
(x2-x1).square()) + 1e-8`. When a predicted box shares a corner with its target (here the ground-truth
boxes are appended to the proposals, as two-stage detectors do, and the regression head starts at
zero), one candidate line has length 0: the forward pass is fine (the `+ 1e-8` keeps the division
finite), but the backward of `sqrt` at 0 is 0 * inf = nan. Every gradient becomes nan and the first
optimizer step turns the head's weights into nan. Nothing raises.
Source: https://github.com/lilanxiao/Rotated_IoU/issues/20 ("Function 'SqrtBackward' returned nan
values in its 0th output. Bug in min_enclosing_box.py?": "there is a sqrt out of range ... when sqrt
encounter 0 values"; author: "Yes, it's a bug ... I've changed that line to
`num = torch.sqrt( (y2-y1).square() + (x2-x1).square() +1e-14)`").
expect: silent"""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# Candidate hull edges: every pair of the 8 corners except the 4 box diagonals, and the 6 other points.
SKIP = [(0, 2), (1, 3), (5, 7), (4, 6)]
LINES = [pair for pair in itertools.combinations(range(8), 2) if pair not in SKIP]
POINTS = [[k for k in range(8) if k not in pair] for pair in LINES]
IDX_LINES = torch.tensor(LINES)
IDX_POINTS = torch.tensor(POINTS)


def box2corners(boxes):
    # boxes: (N, 5) = x, y, w, h, angle -> (N, 4, 2)
    x, y, w, h, alpha = boxes.unbind(-1)
    x4 = torch.tensor([0.5, -0.5, -0.5, 0.5])
    y4 = torch.tensor([0.5, 0.5, -0.5, -0.5])
    xs = x4 * w.unsqueeze(-1)
    ys = y4 * h.unsqueeze(-1)
    cos, sin = torch.cos(alpha).unsqueeze(-1), torch.sin(alpha).unsqueeze(-1)
    return torch.stack([xs * cos - ys * sin + x.unsqueeze(-1), xs * sin + ys * cos + y.unsqueeze(-1)], dim=-1)


def point_line_distance_range(lines, points):
    x1, y1 = lines[..., 0:1, 0], lines[..., 0:1, 1]
    x2, y2 = lines[..., 1:2, 0], lines[..., 1:2, 1]
    x, y = points[..., 0], points[..., 1]
    den = (y2 - y1) * x - (x2 - x1) * y + x2 * y1 - y2 * x1
    num = torch.sqrt((y2 - y1).square() + (x2 - x1).square()) + 1e-8
    d = den / num
    d1 = d.max(dim=-1)[0] - d.min(dim=-1)[0]
    d2 = d.abs().max(dim=-1)[0]
    return torch.max(d1, d2)


def point_line_projection_range(lines, points):
    x1, y1 = lines[..., 0:1, 0], lines[..., 0:1, 1]
    x2, y2 = lines[..., 1:2, 0], lines[..., 1:2, 1]
    k = (y2 - y1) / (x2 - x1 + 1e-8)
    vec = torch.cat([torch.ones_like(k), k], dim=-1).unsqueeze(-2)
    proj = torch.sum(torch.cat([lines, points], dim=-2) * vec, dim=-1) / torch.norm(vec, dim=-1)
    return proj.max(dim=-1)[0] - proj.min(dim=-1)[0]


def smallest_bounding_box(corners):
    corners = corners.double()
    lines = corners[:, IDX_LINES]     # (N, 24, 2, 2)
    points = corners[:, IDX_POINTS]   # (N, 24, 6, 2)
    proj = point_line_projection_range(lines, points)
    dist = point_line_distance_range(lines, points)
    area_min, idx = torch.min(proj * dist, dim=-1, keepdim=True)
    w = torch.gather(proj, -1, idx).squeeze(-1).float()
    h = torch.gather(dist, -1, idx).squeeze(-1).float()
    return w, h


def diou_penalty(pred, target):
    corners = torch.cat([box2corners(pred), box2corners(target)], dim=1)
    w, h = smallest_bounding_box(corners)
    center_distance = (pred[:, :2] - target[:, :2]).square().sum(dim=-1)
    return (center_distance / (w.square() + h.square())).mean()


gt_boxes = torch.tensor([[2.0, 3.0, 4.0, 2.0, 0.3], [6.0, 1.0, 2.0, 3.0, -0.5]])
proposals = torch.cat([gt_boxes + 0.3 * torch.randn(2, 5), gt_boxes])   # ground truth appended
targets = torch.cat([gt_boxes, gt_boxes])
roi_features = torch.randn(4, 12)

head = nn.Linear(12, 5)
nn.init.zeros_(head.weight)
nn.init.zeros_(head.bias)
optimizer = torch.optim.SGD(head.parameters(), lr=0.05)

losses = []
for step in range(3):
    pred = proposals + head(roi_features)
    loss = F.smooth_l1_loss(pred, targets) + diou_penalty(pred, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in head.parameters()]}
