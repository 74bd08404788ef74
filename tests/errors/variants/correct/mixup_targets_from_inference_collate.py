# message: Inplace update to inference tensor outside InferenceMode is not allowed.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 18
# trigger: a collate function decorated with @torch.inference_mode() (written for a fast data
#   pipeline) builds one-hot targets with F.one_hot; the training loop mixes them up in place
#   (targets.mul_(lam).add_(...)) outside inference mode
# source: none found; the pattern as users write it (mixup on the collated batch)
# results: model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@torch.no_grad()  # PRIMARY
def collate(samples):
    xs = torch.stack([x for x, _ in samples])
    ys = F.one_hot(torch.tensor([y for _, y in samples]), 3).float()
    return xs, ys


torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4), i % 3) for i in range(6)]
for start in (0, 3):
    x, targets = collate(data[start:start + 3])
    lam = 0.7
    perm = torch.tensor([2, 0, 1])
    x = lam * x + (1 - lam) * x[perm]
    targets.mul_(lam).add_((1 - lam) * targets[perm])
    optimizer.zero_grad()
    loss = torch.sum(-targets * F.log_softmax(model(x), -1), -1).mean()
    loss.backward()
    optimizer.step()
