"""RetinaNet training (kuangliu/pytorch-retinanet): the dataset's `__getitem__` hands out
`self.boxes[idx]`, the very tensor it stores, and `DataEncoder.encode()` converts the boxes it
receives from (xmin, ymin, xmax, ymax) to (cx, cy, w, h) with slice assignments. The ground truth
held by the dataset is thus converted again at every epoch: from the second epoch the "boxes"
are garbage with negative or zero widths, no anchor matches them, and the localization loss goes
to 0 while the classifier learns "background". No error. The pull request: "This resolves an
issue where an items bounding box ground truths were being assigned by reference and mutated
each time the datum is encoded. This resulted in inputs eventually having 0 width, so there
would be no iou matches and loc loss would go to 0"; the maintainer: "Wow, that's a big one.
THANKS a lot." (the dataset clones the boxes).
Source: https://github.com/kuangliu/pytorch-retinanet/pull/19
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IMG, STRIDE, ANCHOR = 32, 8, 10.0


def box_iou_xywh(a, b):
    a1, a2 = a[:, None, :2] - a[:, None, 2:] / 2, a[:, None, :2] + a[:, None, 2:] / 2
    b1, b2 = b[None, :, :2] - b[None, :, 2:] / 2, b[None, :, :2] + b[None, :, 2:] / 2
    wh = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = a[:, None, 2].clamp(min=0) * a[:, None, 3].clamp(min=0)
    area_b = b[None, :, 2].clamp(min=0) * b[None, :, 3].clamp(min=0)
    return inter / (area_a + area_b - inter).clamp(min=1e-6)


class DataEncoder:
    def __init__(self):
        n = IMG // STRIDE
        ys, xs = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
        centers = torch.stack([xs, ys], dim=-1).reshape(-1, 2).float() * STRIDE + STRIDE / 2
        self.anchors = torch.cat([centers, torch.full_like(centers, ANCHOR)], dim=1)

    def encode(self, boxes, labels):
        boxes[:, 2:] = boxes[:, 2:] - boxes[:, :2]
        boxes[:, :2] = boxes[:, :2] + boxes[:, 2:] / 2
        ious = box_iou_xywh(self.anchors, boxes)
        max_iou, max_ids = ious.max(dim=1)
        matched = boxes[max_ids]
        loc_xy = (matched[:, :2] - self.anchors[:, :2]) / self.anchors[:, 2:]
        loc_wh = torch.log(matched[:, 2:].clamp(min=1e-3) / self.anchors[:, 2:])
        cls_targets = torch.where(max_iou >= 0.3, labels[max_ids] + 1, torch.zeros_like(max_ids))
        return torch.cat([loc_xy, loc_wh], dim=1), cls_targets


class ListDataset:
    def __init__(self, n=6):
        self.images, self.boxes, self.labels = [], [], []
        for _ in range(n):
            xy = torch.randint(2, IMG - 14, (2, 2)).float()
            wh = torch.randint(8, 13, (2, 2)).float()
            self.boxes.append(torch.cat([xy, xy + wh], dim=1))
            self.labels.append(torch.randint(0, 2, (2,)))
            image = torch.randn(3, IMG, IMG) * 0.1
            for (x1, y1, x2, y2) in self.boxes[-1].long().tolist():
                image[:, y1:y2, x1:x2] += 1.0
            self.images.append(image)
        self.encoder = DataEncoder()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        boxes = self.boxes[idx].clone()
        loc_targets, cls_targets = self.encoder.encode(boxes, self.labels[idx])
        return self.images[idx], loc_targets, cls_targets


class TinyRetinaNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(),
        )
        self.loc_head = nn.Conv2d(16, 4, 3, padding=1)
        self.cls_head = nn.Conv2d(16, num_classes + 1, 3, padding=1)

    def forward(self, x):
        f = self.backbone(x)
        loc = self.loc_head(f).permute(0, 2, 3, 1).reshape(x.shape[0], -1, 4)
        cls = self.cls_head(f).permute(0, 2, 3, 1).reshape(x.shape[0], -1, self.cls_head.out_channels)
        return loc, cls


def retina_loss(loc_preds, loc_targets, cls_preds, cls_targets):
    pos = cls_targets > 0
    num_pos = pos.sum().clamp(min=1).float()
    loc_loss = F.smooth_l1_loss(loc_preds[pos], loc_targets[pos], reduction="sum") / num_pos
    cls_loss = F.cross_entropy(cls_preds.reshape(-1, cls_preds.shape[-1]), cls_targets.reshape(-1))
    return loc_loss, cls_loss


dataset = ListDataset()
model = TinyRetinaNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

history = []
for epoch in range(4):
    for start in range(0, len(dataset), 2):
        items = [dataset[i] for i in range(start, start + 2)]
        images = torch.stack([it[0] for it in items])
        loc_targets = torch.stack([it[1] for it in items])
        cls_targets = torch.stack([it[2] for it in items])
        loc_preds, cls_preds = model(images)
        loc_loss, cls_loss = retina_loss(loc_preds, loc_targets, cls_preds, cls_targets)
        optimizer.zero_grad()
        (loc_loss + cls_loss).backward()
        optimizer.step()
        history.append([loc_loss.item(), cls_loss.item()])

result = {"history": torch.tensor(history), "params": [p.detach().clone() for p in model.parameters()]}
