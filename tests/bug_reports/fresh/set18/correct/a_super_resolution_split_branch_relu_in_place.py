"""Image super-resolution network with split channel branches (hellloxiaotian/ESRGCNN, model/
esrgcnn.py): each block splits its features with `torch.split(x, [c1, c2], dim=1)` and passes the
remaining part through the block's `nn.ReLU(inplace=True)`. The part is a view of a function that
returns several views, and training stops at the activation: "Output 1 of
SplitWithSizesBackward0 is a view and is being modified inplace. This view is the output of a
function that returns multiple views."
Source: https://github.com/hellloxiaotian/ESRGCNN/issues/9 (the same error at
`out1_r = self.ReLU(remain1)` when training; an in-place activation on a split output is what
PyTorch forbids, and the block's ReLU made out of place is the fix).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CHANNELS, KEEP = 8, 3


class SplitBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1)
        self.refine = nn.Conv2d(CHANNELS - KEEP, CHANNELS - KEEP, 3, padding=1)
        self.ReLU = nn.ReLU(inplace=False)

    def forward(self, x):
        features = self.conv(x)
        distilled, remain = torch.split(features, [KEEP, CHANNELS - KEEP], dim=1)
        out_r = self.ReLU(remain)
        return torch.cat([distilled, self.refine(out_r)], dim=1) + x


class SuperResolver(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, CHANNELS, 3, padding=1)
        self.blocks = nn.Sequential(SplitBlock(), SplitBlock())
        self.tail = nn.Conv2d(CHANNELS, 3 * 4, 3, padding=1)

    def forward(self, lr):
        return F.pixel_shuffle(self.tail(self.blocks(self.head(lr))), 2)


model = SuperResolver()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
low_res = torch.rand(2, 3, 8, 8)
high_res = torch.rand(2, 3, 16, 16)

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.l1_loss(model(low_res), high_res)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
