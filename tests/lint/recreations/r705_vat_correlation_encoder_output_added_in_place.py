"""Volumetric Aggregation Transformer (few-shot segmentation), issue 6: training raises "one of
the variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [2, 128, 32, 32, 8, 8]], which is output 0 of ReluBackward0".  In
`OurModel.forward` each correlation level goes through its `Encoder4D` -- a `ModuleList` of
`nn.Sequential(Conv4d, GroupNorm, nn.ReLU())` blocks whose `forward` returns `(x, residuals)`
-- and the coarser level is then added into the finer one in place: `corr4 =
self.encoders[1](hypercorr_pyramid[1])[0]`, ..., `corr4 += corr5_upsampled` (and `corr3 +=
corr4_upsampled`).  `corr4` is the output of the last ReLU, which autograd saved; the fix the
reporter found is writing the additions out of place.
Re-created in my own words with a 2-D stand-in for the 4-D convolution (same module nesting:
`ModuleList` of `Sequential` built in a loop, the tuple returned by `forward`, the upsampling
module), two levels and small shapes.
Buggy line: `corr4 += corr5_upsampled`.
Source: https://github.com/Seokju-Cho/Volumetric-Aggregation-Transformer/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Interpolate2d(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
        return F.interpolate(x, size=self.size, mode='bilinear', align_corners=True)


class Encoder4D(nn.Module):
    def __init__(self, corr_levels, group=(2, 4), residual=False):
        super().__init__()
        self.conv4d = nn.ModuleList([])
        for i in range(len(corr_levels) - 1):
            conv4d = nn.Sequential(
                nn.Conv2d(corr_levels[i], corr_levels[i + 1], 3, padding=1),
                nn.GroupNorm(group[i], corr_levels[i + 1]),
                nn.ReLU()  # No inplace for residual
            )
            self.conv4d.append(conv4d)
        self.residual = residual

    def forward(self, x):
        residuals = []
        for conv in self.conv4d:
            if self.residual:
                residuals.append(x)
            x = conv(x)
        return x, residuals


class OurModel(nn.Module):
    def __init__(self, inch=(3, 4)):
        super().__init__()
        self.encoders = nn.ModuleList([
            Encoder4D(corr_levels=(inch[0], 8, 16)),
            Encoder4D(corr_levels=(inch[1], 8, 16)),
        ])
        self.transformer = nn.ModuleList([nn.Conv2d(16, 16, 1), nn.Conv2d(16, 16, 1)])
        self.upscale = nn.ModuleList([Interpolate2d(size=(8, 8))])
        self.decoder = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 2, 3, padding=1))

    def forward(self, hypercorr_pyramid):
        corr5 = self.encoders[0](hypercorr_pyramid[0])[0]
        corr4 = self.encoders[1](hypercorr_pyramid[1])[0]
        corr5 = corr5 + self.transformer[0](corr5)
        corr5_upsampled = self.upscale[0](corr5)
        corr4 += corr5_upsampled  # expect: ADL001, element [0] of the tuple a ModuleList entry returns, its forward ending in an nn.ReLU of a Sequential built in a loop
        corr4 = corr4 + self.transformer[1](corr4)
        return self.decoder(corr4)


def run():
    torch.manual_seed(0)
    model = OurModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    pyramid = [torch.randn(2, 3, 4, 4), torch.randn(2, 4, 8, 8)]
    target = torch.randint(0, 2, (2, 8, 8))
    logit_mask = model(pyramid)
    loss = F.cross_entropy(logit_mask, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
