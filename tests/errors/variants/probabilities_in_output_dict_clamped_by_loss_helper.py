# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 1]], which is output 0 of SigmoidBackward0, is at version 1;
#   expected version 0 instead.
# code: AD101 (catalogue: saved_tensor_modified)
# set: 7
# trigger: the model returns a dict of outputs with torch.sigmoid's probabilities; a loss helper
#   in another file (lib_bce.py) clamps them in place for a stable log, but sigmoid saved its output
# source: none found; the pattern as users write it
# helpers: lib_bce.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_bce import stable_bce  # noqa: E402


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        logits = self.lin(x)
        return {"logits": logits, "probabilities": torch.sigmoid(logits)}


torch.manual_seed(0)
model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, targets = torch.randn(4, 3), torch.tensor([[0.0], [1.0], [1.0], [0.0]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = stable_bce(model(x), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
