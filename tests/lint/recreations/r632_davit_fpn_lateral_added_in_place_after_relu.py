"""An issue on DaViT (dual attention vision transformer) used as a detection
backbone: training stops at the first backward with "one of the variables
needed for gradient computation has been modified by an inplace operation:
[torch.cuda.HalfTensor [16, 512, 128, 128]], which is output 0 of
ReluBackward0, is at version 1".  The failing tensor is a ReLU activation of
a high-resolution feature map.  Re-created as a small backbone with two
stages, a feature-pyramid neck whose lateral branches end in ReLU and whose
top-down pathway adds the upsampled coarse map into the lateral output in
place, a dense head, and a trainer with `run_step()` as in the report.
Raises at the first backward.
Buggy line: `lateral += F.interpolate(top, size=lateral.shape[-2:])` (writes
the ReLU output that ReLU's backward saved).
Source: https://github.com/dingmyu/davit/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.GELU())
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GELU())

    def forward(self, x):
        c1 = self.stage1(x)
        c2 = self.stage2(c1)
        return [c1, c2]


class FPNNeck(nn.Module):
    def __init__(self, in_channels=(8, 16), out_channels=12):
        super().__init__()
        self.lateral_convs = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels)
        self.output_conv = nn.Conv2d(out_channels, out_channels, 3, padding=1)

    def forward(self, feats):
        top = F.relu(self.lateral_convs[1](feats[1]))
        lateral = F.relu(self.lateral_convs[0](feats[0]))
        lateral += F.interpolate(top, size=lateral.shape[-2:])  # expect: ADL001
        return self.output_conv(lateral)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyBackbone()
        self.neck = FPNNeck()
        self.head = nn.Conv2d(12, 4, 1)

    def forward(self, images):
        return self.head(self.neck(self.backbone(images)))


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def run_step(self, images, targets):
        loss_dict = {"heatmap": F.mse_loss(self.model(images), targets)}
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()
        return {k: v.item() for k, v in loss_dict.items()}

    def train(self, start_iter, end_iter):
        for _ in range(start_iter, end_iter):
            self.run_step(torch.randn(2, 3, 32, 32), torch.randn(2, 4, 16, 16))


def run():
    torch.manual_seed(0)
    model = Detector()
    Trainer(model, torch.optim.AdamW(model.parameters(), lr=1e-4)).train(0, 2)
