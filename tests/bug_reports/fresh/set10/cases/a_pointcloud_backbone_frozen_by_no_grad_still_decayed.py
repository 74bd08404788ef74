"""Freezing the 3D backbone of an OpenPCDet detector during fine-tuning: the user wraps the body of
`VoxelBackBone8x.forward` in `with torch.no_grad():` and trains with the default `adam_onecycle`
optimizer, fastai's `OptimWrapper` with "true" (decoupled) weight decay. The backbone's parameters
get no gradient, but they still require grad and are still in the optimizer, and the wrapper decays
every parameter it holds, `p.data.mul_(1 - wd * lr)`, before stepping: the "frozen" weights keep
shrinking towards zero, slowly, over thousands of iterations (no error, no warning).
Source: https://github.com/open-mmlab/OpenPCDet/issues/845 ("fail to freeze some layers with the
adam_onecycle optimizer": "we find that if we use the torch.no_grad, the weights of the layers still
change although not so quickly"; the maintainer points to the wrapper, which skips parameters whose
`requires_grad` is False, fastai_optim.py lines 141-143).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class OptimWrapper:
    """fastai's wrapper as OpenPCDet uses it: decoupled weight decay on every parameter held, then
    the inner optimizer's step (parameters that require no grad are skipped, as in OpenPCDet)."""

    def __init__(self, opt, wd, lr):
        self.opt, self.wd, self.lr = opt, wd, lr

    def step(self):
        for group in self.opt.param_groups:
            for p in group["params"]:
                if p.requires_grad is False:
                    continue
                p.data.mul_(1 - self.wd * self.lr)
        self.opt.step()

    def zero_grad(self):
        self.opt.zero_grad()


class VoxelBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(4, 16, 1), nn.ReLU(), nn.Conv1d(16, 16, 1), nn.ReLU())

    def forward(self, points):
        with torch.no_grad():
            return self.conv(points)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone_3d = VoxelBackbone()
        self.dense_head = nn.Linear(16, 7)       # box regression (x, y, z, l, w, h, yaw)

    def forward(self, points):
        features = self.backbone_3d(points).max(dim=2).values
        return self.dense_head(features)


model = Detector()
lr = 3e-3
optimizer = OptimWrapper(torch.optim.Adam(model.parameters(), lr=lr), wd=0.01, lr=lr)
backbone_before = [p.detach().clone() for p in model.backbone_3d.parameters()]

losses = []
for step in range(5):
    points = torch.randn(4, 4, 32)               # batch, (x, y, z, intensity), points
    boxes = torch.randn(4, 7)
    loss = nn.functional.smooth_l1_loss(model(points), boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()],
          "backbone_change": [(p.detach() - b).abs().max() for p, b in zip(model.backbone_3d.parameters(), backbone_before)]}
