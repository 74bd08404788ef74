"""Feature-level CutMix on a small ResNet-style classifier: inside `forward`, after `layer1`, a random
box of the feature map is replaced by the same box from a shuffled batch,
`x[:, :, bbx1:bbx2, bby1:bby2] = x[rand_index, :, bbx1:bbx2, bby1:bby2]`, and the loss mixes the two
label sets by the box's area. `x` is the output of `layer1`'s final ReLU, which autograd saved to
compute ReLU's gradient; the slice assignment overwrites it, so `loss.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation".
Source: https://github.com/clovaai/CutMix-PyTorch/issues/5 ("how to implement Feature level
Cutmix?": the replace operation in `forward` gives "RuntimeError: one of the variables needed for
gradient computation has been modified by an inplace operation"); the correct version pastes the
box into a copy of the feature map, so the ReLU output autograd saved stays intact.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, BATCH, SIZE = 4, 6, 8


def rand_bbox(size, lam):
    w, h = size[2], size[3]
    cut = (1.0 - lam) ** 0.5
    cw, ch = int(w * cut), int(h * cut)
    cx, cy = int(torch.randint(w, ()).item()), int(torch.randint(h, ()).item())
    return max(cx - cw // 2, 0), max(cy - ch // 2, 0), min(cx + cw // 2, w), min(cy + ch // 2, h)


class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        out = F.relu(self.conv1(x))
        return F.relu(self.conv2(out) + x)


class FeatureCutMixNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.layer1 = Block(8)
        self.layer2 = Block(8)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x, rand_index, lam):
        x = self.layer1(F.relu(self.stem(x)))
        bbx1, bby1, bbx2, bby2 = rand_bbox(x.size(), lam)
        x[:, :, bbx1:bbx2, bby1:bby2] = x[rand_index, :, bbx1:bbx2, bby1:bby2]
        lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (x.size(-1) * x.size(-2)))
        x = self.layer2(x)
        return self.fc(x.mean(dim=(2, 3))), lam


model = FeatureCutMixNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.rand(BATCH, 3, SIZE, SIZE)
target = torch.randint(0, CLASSES, (BATCH,))
losses = []
for it in range(3):
    lam = float(torch.distributions.Beta(1.0, 1.0).sample())
    rand_index = torch.randperm(BATCH)
    output, lam = model(images, rand_index, lam)
    loss = lam * F.cross_entropy(output, target) + (1 - lam) * F.cross_entropy(output, target[rand_index])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
