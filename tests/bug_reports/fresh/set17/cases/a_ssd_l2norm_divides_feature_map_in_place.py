"""Single-shot detector with a VGG backbone (lzx1413/PytorchSSD, layers/modules/l2norm.py): the
L2Norm layer that rescales the conv4_3 feature map divided its input in place (`x /= norm`). That
input is the output of the backbone's in-place ReLU, which ReLU's backward needs, and the input of
the norm's own `pow`; backward() finds it modified.
Source: https://github.com/lzx1413/PytorchSSD/issues/72 ("one of the variables needed for gradient
computation has been modified by an inplace operation"; solved by writing `x = x / norm`, or
`torch.div(x, norm)`, in l2norm.py).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, ANCHORS, BATCH = 3, 2, 2


class L2Norm(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.full((channels,), float(scale)))
        self.eps = 1e-10

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x /= norm
        return self.weight[None, :, None, None] * x


class TinySSD(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv4 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.conv7 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.l2norm = L2Norm(8, 20)
        self.loc = nn.ModuleList([nn.Conv2d(8, ANCHORS * 4, 3, padding=1) for _ in range(2)])
        self.conf = nn.ModuleList([nn.Conv2d(8, ANCHORS * CLASSES, 3, padding=1) for _ in range(2)])

    def forward(self, images):
        x = self.conv4(images)
        sources = [self.l2norm(x)]
        x = self.conv7(x)
        sources.append(x)
        loc = torch.cat([head(s).permute(0, 2, 3, 1).reshape(s.shape[0], -1, 4)
                         for head, s in zip(self.loc, sources)], dim=1)
        conf = torch.cat([head(s).permute(0, 2, 3, 1).reshape(s.shape[0], -1, CLASSES)
                          for head, s in zip(self.conf, sources)], dim=1)
        return loc, conf


model = TinySSD()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
images = torch.randn(BATCH, 3, 8, 8)
priors = 8 * 8 * ANCHORS + 4 * 4 * ANCHORS
target_loc = torch.randn(BATCH, priors, 4)
target_conf = torch.randint(0, CLASSES, (BATCH, priors))

losses = []
for step in range(3):
    optimizer.zero_grad()
    loc, conf = model(images)
    loss = F.smooth_l1_loss(loc, target_loc) + F.cross_entropy(conf.reshape(-1, CLASSES), target_conf.reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
