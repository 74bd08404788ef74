# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but
#   got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 6
# trigger: prompt tuning: the only trained tensor is the module's prompt (an nn.Parameter), given
#   alone to the project's make_optimizer helper in another file (lib_training.py)
# source: none found; the pattern as users write it
# helpers: lib_training.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_training import make_optimizer  # noqa: E402


class PromptedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.prompt = nn.Parameter(torch.zeros(1, 4))
        self.encoder = nn.Linear(4, 2)
        self.encoder.requires_grad_(False)

    def forward(self, x):
        return self.encoder(x + self.prompt)


torch.manual_seed(0)
model = PromptedClassifier()
optimizer = make_optimizer(model.prompt, lr=0.05)  # PRIMARY
x, y = torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
