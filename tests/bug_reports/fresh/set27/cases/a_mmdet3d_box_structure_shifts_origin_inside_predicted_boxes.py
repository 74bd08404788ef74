"""Indoor 3D detection with mmdetection3d's box structures: `BaseInstance3DBoxes.__init__` turns
its argument into a tensor with `torch.as_tensor` (no copy for a tensor) and, when the boxes are
given with another origin than the bottom center, moves the centers with
`self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)`, in place, in the caller's tensor. A
head that decodes its predicted boxes, takes a smooth-L1 regression loss on them, and then wraps
them as `DepthInstance3DBoxes(bbox_pred, origin=(0.5, 0.5, 0.5))` to compare gravity centers has
its own predictions rewritten after the regression loss saved them: backward raises "one of the
variables needed for gradient computation has been modified by an inplace operation". The
report: "the inplace modification of tensor in this line is dangerous ... In many cases pytorch
doesn't like inplace modifications of variables under the gradient"; merged in #283 ("fix
issues with inplace modification of tensors in BaseInstance3DBoxes"): the structure works on its
own copy, and the caller's tensor is left as it was.
Source: https://github.com/open-mmlab/mmdetection3d/issues/277
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BaseInstance3DBoxes:
    def __init__(self, tensor, box_dim=7, origin=(0.5, 0.5, 0)):
        if isinstance(tensor, torch.Tensor):
            device = tensor.device
        else:
            device = torch.device("cpu")
        tensor = torch.as_tensor(tensor, dtype=torch.float32, device=device)
        assert tensor.dim() == 2 and tensor.size(-1) == box_dim, tensor.size()
        self.box_dim = box_dim
        self.tensor = tensor
        if origin != (0.5, 0.5, 0):
            dst = self.tensor.new_tensor((0.5, 0.5, 0))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)

    @property
    def bottom_center(self):
        return self.tensor[:, :3]

    @property
    def dims(self):
        return self.tensor[:, 3:6]


class DepthInstance3DBoxes(BaseInstance3DBoxes):
    @property
    def gravity_center(self):
        bottom_center = self.bottom_center
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, :2] = bottom_center[:, :2]
        gravity_center[:, 2] = bottom_center[:, 2] + self.tensor[:, 5] * 0.5
        return gravity_center


class VoteBBoxHead(nn.Module):
    def __init__(self, in_channels=16, num_proposals=6):
        super().__init__()
        self.num_proposals = num_proposals
        self.shared = nn.Sequential(nn.Linear(in_channels, 32), nn.ReLU())
        self.center_reg = nn.Linear(32, 3)
        self.size_reg = nn.Linear(32, 3)
        self.dir_reg = nn.Linear(32, 1)

    def forward(self, feats):
        x = self.shared(feats)
        return self.center_reg(x), self.size_reg(x), self.dir_reg(x)

    def decode(self, center, size_res, dir_res):
        # boxes predicted with their gravity center as origin
        return torch.cat([center, size_res.exp(), dir_res], dim=-1)

    def loss(self, bbox_pred, gt_bboxes):
        bbox_loss = F.smooth_l1_loss(bbox_pred, gt_bboxes.tensor, beta=0.1)
        pred_boxes = DepthInstance3DBoxes(bbox_pred, origin=(0.5, 0.5, 0.5))
        center_loss = F.l1_loss(pred_boxes.gravity_center, gt_bboxes.gravity_center)
        return bbox_loss + center_loss


def make_scene(n=6):
    feats = torch.randn(n, 16)
    centers = torch.randn(n, 3)
    sizes = torch.rand(n, 3) + 0.5
    yaw = torch.rand(n, 1)
    gt = DepthInstance3DBoxes(torch.cat([centers, sizes, yaw], dim=-1), origin=(0.5, 0.5, 0.5))
    return feats, gt


head = VoteBBoxHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.05)
scenes = [make_scene() for _ in range(3)]

losses = []
for epoch in range(2):
    for feats, gt_bboxes in scenes:
        optimizer.zero_grad()
        center, size_res, dir_res = head(feats)
        bbox_pred = head.decode(center, size_res, dir_res)
        loss = head.loss(bbox_pred, gt_bboxes)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "params": [p.detach().clone() for p in head.parameters()],
}
