# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 4
# trigger: a scoring helper in another file (lib_scoring.py) carries @torch.no_grad() (written for
#   evaluation); training binds it to the model with functools.partial and backpropagates its
#   result with loss.backward()
# source: none found; the pattern as users write it
# helpers: lib_scoring.py
# results: losses, model
import functools
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_scoring import pooled_logits  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
score = functools.partial(pooled_logits, model, pool="mean")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(2, 5, 4), torch.tensor([0, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(score(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
