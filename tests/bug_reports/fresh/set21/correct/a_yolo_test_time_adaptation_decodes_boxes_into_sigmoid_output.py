"""Test-time adaptation of a YOLOv7 detector (WongKinYiu/yolov7, the detection head's inference
path): the model is put in eval mode so that the head returns decoded boxes, and an adaptation
loss on those decoded predictions is minimised with an optimizer. The head computes
`y = x[i].sigmoid()` and then decodes the box centres and sizes by assigning into slices of `y`
(`y[..., 0:2] = ...`, `y[..., 2:4] = ...`). The sigmoid keeps its output for backward, the slice
assignments write into it, and the adaptation loss's backward() fails ("Error detected in
SigmoidBackward0 ... modified by an inplace operation"). The head's decode is written for
inference only; decoding into new tensors (concatenating the decoded slices) keeps the values and
lets the adaptation differentiate them.
Source: https://github.com/WongKinYiu/yolov7/issues/1935 ("it reported an error in loss.backward()").
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

NUM_CLASSES, ANCHORS, GRID = 3, 2, 4
OUTPUTS = NUM_CLASSES + 5


class DetectHead(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, ANCHORS * OUTPUTS, 1)
        self.stride = 8.0
        ys, xs = torch.meshgrid(torch.arange(GRID), torch.arange(GRID), indexing="ij")
        self.register_buffer("grid", torch.stack((xs, ys), dim=-1).view(1, 1, GRID, GRID, 2).float())
        self.register_buffer("anchor_grid", torch.tensor([[10.0, 13.0], [16.0, 30.0]]).view(1, ANCHORS, 1, 1, 2))

    def forward(self, features):
        b = features.shape[0]
        x = self.conv(features).view(b, ANCHORS, OUTPUTS, GRID, GRID).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return x
        y = x.sigmoid()
        xy = (y[..., 0:2] * 2.0 - 0.5 + self.grid) * self.stride
        wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid
        y = torch.cat((xy, wh, y[..., 4:]), dim=-1)
        return y.view(b, -1, OUTPUTS), x


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.SiLU())
        self.head = DetectHead(16)

    def forward(self, images):
        return self.head(self.backbone(images))


def adaptation_loss(decoded):
    objectness = decoded[..., 4:5]
    classes = decoded[..., 5:] * objectness
    probs = classes / classes.sum(-1, keepdim=True)
    return -(probs * probs.clamp_min(1e-8).log()).sum(-1).mean()


model = Detector()
model.eval()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
images = torch.randn(2, 3, 4 * GRID, 4 * GRID)

losses = []
for step in range(3):
    decoded, raw = model(images)
    loss = adaptation_loss(decoded)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
