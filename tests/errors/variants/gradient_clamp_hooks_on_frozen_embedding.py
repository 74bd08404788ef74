# message: cannot register a hook on a tensor that doesn't require gradient
# code: AD116 (catalogue: hook_no_grad)
# set: 10
# helpers: lib_grad_clamp.py
# trigger: a helper in another file clamps gradients with a tensor hook on every parameter of the
#   model (register_hook over model.parameters()); the pretrained embedding was frozen first
# source: none found; the pattern as users write it (per-parameter gradient clamping with hooks)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_clamp import clamp_gradients  # noqa: E402


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(1))


torch.manual_seed(0)
model = Classifier()
model.embedding.weight.requires_grad_(False)
clamp_gradients(model, limit=0.1)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
tokens, labels = torch.randint(0, 10, (6, 5)), torch.tensor([0, 1, 0, 1, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
