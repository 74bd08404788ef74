"""PSPNet for semantic segmentation (meetps/pytorch-semseg, ptsemseg/models/pspnet.py): the final
conv-BN-ReLU block uses `nn.ReLU(inplace=True)` and its output goes through
`nn.Dropout2d(p=0.1, inplace=True)` before the classifier. The in-place ReLU keeps its output for
its own backward; the in-place dropout then overwrites that output, and the first
`loss.backward()` raises "one of the variables needed for gradient computation has been modified
by an inplace operation".
Source: https://github.com/meetps/pytorch-semseg/issues/96 ("Replace this line ... with
`self.dropout = nn.Dropout2d(p=0.1, inplace=False)` or just remove the inplace flag"); the same
answer closed https://github.com/meetps/pytorch-semseg/issues/121.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, SIZE, BATCH = 4, 8, 2


class ConvBatchNormRelu(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.unit = nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(out_channels), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.unit(x)


class TinyPSPNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBatchNormRelu(3, 8)
        self.pool_branch = nn.Conv2d(8, 4, 1)
        self.cbr_final = ConvBatchNormRelu(12, 8)
        self.dropout = nn.Dropout2d(p=0.1, inplace=True)
        self.classification = nn.Conv2d(8, CLASSES, 1)

    def forward(self, x):
        x = self.stem(x)
        pooled = F.interpolate(self.pool_branch(F.adaptive_avg_pool2d(x, 2)), size=x.shape[-2:])
        x = self.cbr_final(torch.cat([x, pooled], dim=1))
        x = self.dropout(x)
        return self.classification(x)


model = TinyPSPNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(BATCH, 3, SIZE, SIZE)
labels = torch.randint(0, CLASSES, (BATCH, SIZE, SIZE))

losses = []
for step in range(3):
    torch.manual_seed(step)  # the same dropout masks in any correct version
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
