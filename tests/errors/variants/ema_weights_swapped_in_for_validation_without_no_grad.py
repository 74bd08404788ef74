# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 20
# trigger: an EMA helper class keeps shadow copies of the weights and swaps them into the model for
#   validation with param.copy_(shadow) in a store/copy_to/restore trio, written without
#   torch.no_grad(); the training loop validates every other step
# source: none found; the pattern as users write it (EMA helpers of image classifiers)
# results: model, ema.shadow, val_losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class ExponentialMovingAverage:
    def __init__(self, parameters, decay=0.9):
        self.parameters = list(parameters)
        self.decay = decay
        self.shadow = [p.detach().clone() for p in self.parameters]
        self.backup = []

    def update(self):
        with torch.no_grad():
            for s, p in zip(self.shadow, self.parameters):
                s.mul_(self.decay).add_(p, alpha=1 - self.decay)

    def copy_to(self):
        self.backup = [p.detach().clone() for p in self.parameters]
        for s, p in zip(self.shadow, self.parameters):
            p.copy_(s)  # PRIMARY

    def restore(self):
        with torch.no_grad():
            for b, p in zip(self.backup, self.parameters):
                p.copy_(b)


torch.manual_seed(0)
model = nn.Linear(4, 1)
ema = ExponentialMovingAverage(model.parameters())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x_val, y_val = torch.randn(8, 4), torch.randn(8, 1)
val_losses = []
for step in range(4):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ema.update()
    if step % 2 == 1:
        ema.copy_to()
        with torch.no_grad():
            val_losses.append(nn.functional.mse_loss(model(x_val), y_val))
        ema.restore()
