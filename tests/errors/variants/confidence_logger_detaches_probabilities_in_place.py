# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is
#   not supported, please use out-of-place `.detach()` instead
# code: AD139 (catalogue: detach_saved_inplace)
# set: 6
# trigger: a logging helper in another file (lib_logging.py) calls probabilities.detach_() "to
#   avoid keeping the graph" on the softmax output the loss was computed from, before backward()
# source: none found; the pattern as users write it
# helpers: lib_logging.py
# results: losses, confidences, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_logging import mean_confidence  # noqa: E402

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
losses, confidences = [], []
for _ in range(2):
    optimizer.zero_grad()
    probabilities = torch.softmax(model(x), dim=1)
    loss = F.nll_loss(torch.log(probabilities), y)
    confidences.append(mean_confidence(probabilities))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
