# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# trigger: an accuracy metric in another file (lib_metrics.py) converts the model's softmax to
#   NumPy; it is called from a Trainer-like class's fit() on the training logits
# source: none found; the pattern as users write it
# helpers: lib_metrics.py
# results: history, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_metrics import accuracy  # noqa: E402


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.history = []

    def fit(self, batches):
        for x, y in batches:
            self.optimizer.zero_grad()
            logits = self.model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()
            self.optimizer.step()
            self.history.append((loss.item(), accuracy(logits, y)))


torch.manual_seed(0)
model = nn.Linear(4, 3)
batches = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(2)]
trainer = Trainer(model, lr=0.1)
trainer.fit(batches)
history = trainer.history
