# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss)
# set: 21
# trigger: a run_epoch(phase) helper opens torch.set_grad_enabled(phase == "training") while the
#   caller passes "train"; model.train(phase == "train") and the backward branch use the other
#   spelling, so the loss is computed with gradients off
# source: none found; the pattern as users write it (the train/val phase loop of the PyTorch
#   transfer-learning tutorial, with the phase name spelled two ways)
# results: model, history
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def run_epoch(model, batches, optimizer, phase):
    model.train(phase == "train")
    total = 0.0
    for x, y in batches:
        with torch.set_grad_enabled(phase == "training"):  # PRIMARY
            loss = nn.functional.mse_loss(model(x), y)
        if phase == "train":
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(batches)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = {phase: [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)] for phase in ("train", "val")}
history = []
for epoch in range(2):
    for phase in ("train", "val"):
        history.append(run_epoch(model, data[phase], optimizer, phase))
