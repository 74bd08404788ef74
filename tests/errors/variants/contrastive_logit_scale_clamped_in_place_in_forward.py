# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 14
# trigger: a CLIP-like dual encoder clamps its learned temperature (logit_scale, an nn.Parameter)
#   with clamp_ at the start of forward, where CLIP's training code clamps it under no_grad
# source: after https://github.com/mlfoundations/open_clip (logit_scale clamped to [0, ln 100])
# results: model, losses
import math

import torch
import torch.nn.functional as F
from torch import nn


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = nn.Linear(5, 3)
        self.text = nn.Linear(4, 3)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, texts):
        self.logit_scale.clamp_(0, math.log(100))  # PRIMARY
        a = F.normalize(self.image(images), dim=-1)
        b = F.normalize(self.text(texts), dim=-1)
        return self.logit_scale.exp() * a @ b.T


torch.manual_seed(0)
model = DualEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
images, texts = torch.randn(4, 5), torch.randn(4, 4)
labels = torch.arange(4)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    logits = model(images, texts)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
