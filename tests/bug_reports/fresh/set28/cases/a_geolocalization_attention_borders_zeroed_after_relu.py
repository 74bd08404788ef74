"""Cross-view geo-localization (drone and satellite images of the same place; RK-Net): the unit
subtraction attention module (USAM) turns a feature map into a one-channel saliency map, keeps
its positive part with a ReLU, and, when `polish` is on, zeroes the map's border rows and columns
in place (`att[:, :, :, 0] = 0`, ...) so that padding does not light up as key points. The ReLU
saved its output for backward, the border writes bump its version, and `loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [8, 1, 96, 96]], which is output 0 of ReluBackward0". The answer in the
thread: "This modifies the att tensor in-place ... add `att = att.clone()` under `if
self.polish:`", which keeps the zeroed borders and gives autograd its own copy to write.
Source: https://github.com/AggMan96/RK-Net/issues/9
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(1)
        self.relu = nn.ReLU()
        self.polish = polish

    def saliency(self, x):
        # channel-mean map, smoothed by a learned 3x3 filter
        m = x.mean(dim=1, keepdim=True)
        return self.bn(self.conv(m))

    def forward(self, x):
        s = self.saliency(x)
        neighbourhood = F.avg_pool2d(s, 3, stride=1, padding=1)
        att = self.relu(s - neighbourhood)
        if self.polish:
            att[:, :, :, 0] = 0
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0
        mask = torch.sigmoid(att)
        return x * mask + x


class Backbone(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.usam = USAM()
        self.block = nn.Sequential(nn.Conv2d(width, width * 2, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        x = self.stem(x)
        x = self.usam(x)
        return self.block(x)


class TwoViewNet(nn.Module):
    """Drone and satellite views share one backbone and one location classifier."""

    def __init__(self, num_locations=5, width=8):
        super().__init__()
        self.backbone = Backbone(width)
        self.classifier = nn.Linear(width * 2, num_locations)

    def forward(self, drone, satellite):
        fd = F.adaptive_avg_pool2d(self.backbone(drone), 1).flatten(1)
        fs = F.adaptive_avg_pool2d(self.backbone(satellite), 1).flatten(1)
        return self.classifier(fd), self.classifier(fs)


model = TwoViewNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(4, 3, 12, 12), torch.randn(4, 3, 12, 12), torch.randint(0, 5, (4,))) for _ in range(3)]

losses = []
model.train()
for epoch in range(2):
    for drone, satellite, labels in batches:
        optimizer.zero_grad()
        out_d, out_s = model(drone, satellite)
        loss = criterion(out_d, labels) + criterion(out_s, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "params": [p.detach().clone() for p in model.parameters()],
}
