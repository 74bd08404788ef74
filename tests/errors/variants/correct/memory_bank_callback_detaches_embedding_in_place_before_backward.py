# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not
#   supported, please use out-of-place `.detach()` instead
# code: AD139 (catalogue: detach_saved_inplace)
# set: 25
# trigger: a Trainer-like class calls its callbacks' on_forward_end(outputs) between the forward and
#   backward(); a memory-bank callback keeps the recent embeddings as negatives with
#   embedding.detach_(), the embedding the classifier head (nn.Linear) saved as its input
# source: none found; the pattern as users write it (memory banks of negatives filled from a callback)
# results: model, trainer.losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class MemoryBankCallback:
    """Keeps the most recent embeddings as negatives for a later contrastive stage."""

    def __init__(self, size=8):
        self.size = size
        self.bank = []

    def on_forward_end(self, outputs):
        embedding = outputs["embedding"]
        self.bank = (self.bank + [embedding.detach()])[-self.size:]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        embedding = self.encoder(x)
        return {"embedding": embedding, "logits": self.head(embedding)}


class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.callbacks = callbacks
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses = []

    def fit(self, x, y, steps):
        for _ in range(steps):
            outputs = self.model(x)
            for callback in self.callbacks:
                callback.on_forward_end(outputs)
            loss = F.cross_entropy(outputs["logits"], y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.detach())


torch.manual_seed(0)
model = Classifier()
trainer = Trainer(model, [MemoryBankCallback()])
trainer.fit(torch.randn(4, 5), torch.tensor([0, 2, 1, 0]), steps=3)
