"""Face recognition training with an adaptive-margin head (mk-minchul/AdaFace) in automatic mixed
precision: the user had changed one PReLU layer of the IR backbone to float16 weights while
editing the model. Autocast already runs that layer in half precision; with its weights stored
in half, its gradients are fp16 too, and `GradScaler` stops with "ValueError: Attempting to
unscale FP16 gradients."
Source: https://github.com/mk-minchul/AdaFace/issues/127 (resolved by the reporter: "I
accidentally modified the original code PReLU layer to use a torch.Float16 datatype"; the
original layer keeps float32 weights and autocast handles the casts).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, EMBED = 5, 8


class IRBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.prelu = nn.PReLU(channels).to(torch.float16)

    def forward(self, x):
        return x + self.prelu(self.bn(self.conv(x)))


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.block = IRBlock(4)
        self.embed = nn.Linear(4 * 4 * 4, EMBED)

    def forward(self, images):
        return self.embed(self.block(self.stem(images)).flatten(1))


class AdaptiveMarginHead(nn.Module):
    def __init__(self, m=0.4, s=16.0):
        super().__init__()
        self.kernel = nn.Parameter(torch.randn(EMBED, CLASSES) * 0.1)
        self.m, self.s = m, s

    def forward(self, embeddings, labels):
        norms = embeddings.norm(dim=1, keepdim=True)
        cosine = F.normalize(embeddings, dim=1) @ F.normalize(self.kernel, dim=0)
        quality = ((norms - norms.mean()) / (norms.std() + 1e-3)).clamp(-1, 1).detach()
        margin = F.one_hot(labels, CLASSES) * self.m * (1 + quality) / 2
        return (cosine - margin) * self.s


backbone, head = Backbone(), AdaptiveMarginHead()
params = list(backbone.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler("cpu", init_scale=256.0)

images = torch.randn(6, 3, 8, 8)
labels = torch.randint(0, CLASSES, (6,))

losses = []
for step in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        logits = head(backbone(images).float(), labels)
    loss = F.cross_entropy(logits, labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().float().clone() for p in params]}
