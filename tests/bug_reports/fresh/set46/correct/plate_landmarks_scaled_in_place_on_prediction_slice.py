"""A licence-plate detector (YOLO with four corner landmarks per plate and two plate classes): in
`compute_loss` the predictions at the target cells are gathered into `ps`; the class loss is
`BCEcls(ps[:, 13:], t)`, which saves that slice of `ps` for backward, and then the landmark
offsets are scaled by the anchors in place on another slice of the same tensor,
`plandmarks = ps[:, 5:13]; plandmarks[:, 0:2] = plandmarks[:, 0:2] * anchors[i]` (four times).
The writes raise `ps`'s version, so backward() fails: "one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.FloatTensor [N, 2]], which is output
0 of AsStridedBackward0, is at version 4; expected version 0". The change the loss needs (no answer
in the thread): scale a copy of the landmark slice, `plandmarks = ps[:, 5:13].clone()`.
Source: https://github.com/we0091234/Chinese_license_plate_detection_recognition/issues/33
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

NA, NC, GRID = 2, 2, 4
NO = 5 + 8 + NC  # box (4), objectness, 4 landmarks (8), classes


class WingLoss(nn.Module):
    def __init__(self, w=10, e=2):
        super().__init__()
        self.w = w
        self.e = e
        self.C = self.w - self.w * np.log(1 + self.w / self.e)

    def forward(self, x, t):
        weight = torch.ones_like(t)
        weight[torch.where(t == -1)] = 0
        diff = weight * (x - t)
        abs_diff = diff.abs()
        flag = (abs_diff.data < self.w).float()
        y = flag * self.w * torch.log(1 + abs_diff / self.e) + (1 - flag) * (abs_diff - self.C)
        return y.sum()


class LandmarksLoss(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.loss_fcn = WingLoss()
        self.alpha = alpha

    def forward(self, pred, truel, mask):
        loss = self.loss_fcn(pred * mask, truel * mask)
        return loss / (torch.sum(mask) + 10e-14)


class PlateHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, NA * NO, 3, padding=1)
        self.hyp = {"box": 0.05, "obj": 1.0, "cls": 0.5, "landmark": 0.005}

    def forward(self, img):
        bs = img.shape[0]
        out = self.conv(img)
        return [out.view(bs, NA, NO, GRID, GRID).permute(0, 1, 3, 4, 2).contiguous()]


def build_targets(p, targets):
    """Targets already assigned to cells: (image, anchor, gy, gx), class, box, landmarks."""
    b, a, gj, gi = targets["indices"]
    return ([targets["cls"]], [targets["box"]], [(b, a, gj, gi)], [targets["anchors"]],
            [targets["landmarks"]], [torch.ones_like(targets["landmarks"])])


def compute_loss(p, targets, model):
    lcls, lbox, lobj, lmark = torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1)
    tcls, tbox, indices, anchors, tlandmarks, lmks_mask = build_targets(p, targets)
    h = model.hyp
    BCEcls = nn.BCEWithLogitsLoss()
    BCEobj = nn.BCEWithLogitsLoss()
    landmarks_loss = LandmarksLoss(1.0)

    for i, pi in enumerate(p):
        b, a, gj, gi = indices[i]
        tobj = torch.zeros_like(pi[..., 0])
        n = b.shape[0]
        if n:
            ps = pi[b, a, gj, gi]

            pxy = ps[:, :2].sigmoid() * 2. - 0.5
            pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anchors[i]
            lbox += ((torch.cat((pxy, pwh), 1) - tbox[i]) ** 2).mean()

            tobj[b, a, gj, gi] = 1.0

            t = torch.full_like(ps[:, 13:], 0.0)
            t[range(n), tcls[i]] = 1.0
            lcls += BCEcls(ps[:, 13:], t)

            plandmarks = ps[:, 5:13].clone()

            plandmarks[:, 0:2] = plandmarks[:, 0:2] * anchors[i]
            plandmarks[:, 2:4] = plandmarks[:, 2:4] * anchors[i]
            plandmarks[:, 4:6] = plandmarks[:, 4:6] * anchors[i]
            plandmarks[:, 6:8] = plandmarks[:, 6:8] * anchors[i]

            lmark += landmarks_loss(plandmarks, tlandmarks[i], lmks_mask[i])

        lobj += BCEobj(pi[..., 4], tobj)

    lbox *= h["box"]
    lobj *= h["obj"]
    lcls *= h["cls"]
    lmark *= h["landmark"]
    loss = lbox + lobj + lcls + lmark
    return loss, torch.cat((lbox, lobj, lcls, lmark)).detach()


model = PlateHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
imgs = torch.rand(2, 3, GRID, GRID)
n_targets = 5
targets = {
    "indices": (torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 1, 0, 1, 0]),
                torch.tensor([0, 1, 2, 3, 1]), torch.tensor([1, 2, 0, 3, 3])),
    "cls": torch.tensor([0, 1, 0, 0, 1]),
    "box": torch.rand(n_targets, 4),
    "anchors": torch.tensor([[1.2, 0.5], [2.0, 0.8], [1.2, 0.5], [2.0, 0.8], [1.2, 0.5]]),
    "landmarks": torch.rand(n_targets, 8) - 0.5,
}

history = []
for step in range(3):
    pred = model(imgs)
    loss, loss_items = compute_loss(pred, targets, model)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(loss_items)

result = {"params": {k: v.detach().clone() for k, v in model.state_dict().items()},
          "history": torch.stack(history)}
