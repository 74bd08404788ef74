# message: `inputs` argument to `backward()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 30
# trigger: a fine-tuning Trainer-like class backpropagates into the trainable parameters only,
#   backward(inputs=[p for p in model.parameters() if p.requires_grad]); the freezing helper in another
#   file froze the whole model (model.requires_grad_(False)) instead of its backbone, so the list is empty
# source: none found; the pattern as users write it (a freeze helper given the model, not the backbone)
# helpers: lib_finetune30.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_finetune30 import freeze_backbone  # noqa: E402


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(5, 8), nn.GELU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


class FineTuner:
    def __init__(self, model, lr=0.1):
        self.model = freeze_backbone(model)
        self.optimizer = torch.optim.SGD(model.head.parameters(), lr=lr)

    def step(self, x, labels):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(x), labels)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        loss.backward(inputs=trainable)
        self.optimizer.step()
        return loss.detach()


torch.manual_seed(0)
model = Classifier()
tuner = FineTuner(model)
losses = [tuner.step(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
