# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol
#   at the moment.
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 7
# trigger: a Trainer-like step returns a dataclass holding the loss tensor; the history keeps
#   copy.deepcopy(output) of every step so that later steps cannot change it
# source: none found; the pattern as users write it
# results: history_losses, model
import copy
from dataclasses import dataclass

import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class StepOutput:
    loss: torch.Tensor
    step: int


def training_step(model, optimizer, x, y, step):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    output = StepOutput(loss=loss, step=step)  # PRIMARY
    loss.backward()
    optimizer.step()
    return output


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
history = []
for step in range(2):
    history.append(copy.deepcopy(training_step(model, optimizer, x, y, step)))
history_losses = [entry.loss.item() for entry in history]
