"""An adversarial patch optimised against a YOLOv7 detector (WongKinYiu/yolov7's models/yolo.py,
`Detect.forward` in inference mode): the head decodes boxes in place on the sigmoid of its raw
output, `y = x[i].sigmoid()` then `y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) *
self.stride[i]` and `y[..., 2:4] = ...`. Sigmoid's backward needs its output `y`, which these writes
change: backpropagating the patch loss from the decoded detections raises "one of the variables
needed for gradient computation has been modified by an inplace operation: [..., 85]], which is
output 0 of SigmoidBackward0, is at version 2; expected version 0".
Source: https://github.com/WongKinYiu/yolov7/issues/1527 ("Backpropagation Error" while generating an
adversarial example; the answer: "There is an in-place operation in models/yolo.py, line 54", fixed by
computing the decoded boxes out of place).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=3, anchors=((10, 13, 16, 30),), ch=(8,), stride=(4.0,)):
        super().__init__()
        self.no, self.nl, self.na = nc + 5, len(anchors), len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        self.register_buffer("anchor_grid", torch.tensor(anchors).float().view(self.nl, 1, -1, 1, 1, 2))
        self.stride = torch.tensor(stride)
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)

    @staticmethod
    def _make_grid(nx, ny):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        return torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny)
                y = x[i].sigmoid()
                xy = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]   # xy
                wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]               # wh
                y = torch.cat((xy, wh, y[..., 4:]), -1)
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.SiLU())
        self.detect = Detect()

    def forward(self, images):
        return self.detect([self.backbone(images)])


model = TinyYolo().eval()
for parameter in model.parameters():
    parameter.requires_grad_(False)
patch = torch.rand(3, 6, 6, requires_grad=True)
optimizer = torch.optim.Adam([patch], lr=0.03)

losses = []
for step in range(4):
    images = torch.rand(2, 3, 16, 16)
    patched = images.clone()
    patched[:, :, 5:11, 5:11] = patch                      # paste the patch in the middle
    detections = model(patched)[0]                         # [batch, boxes, 5 + classes]
    loss = (detections[..., 4] * detections[..., 5:].max(-1).values).max(1).values.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        patch.clamp_(0, 1)
    losses.append(loss.detach())

result = {"losses": losses, "patch": patch.detach().clone()}
