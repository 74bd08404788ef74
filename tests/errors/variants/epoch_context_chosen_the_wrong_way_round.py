# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: grad_inside_no_grad_block)
# set: 8
# trigger: a Trainer-like class runs training and validation epochs through one method, which picks
#   its context manager with a conditional expression written the wrong way round
#   (torch.no_grad() when training, contextlib.nullcontext() when validating)
# source: none found; the pattern as users write it (one run_epoch for both phases)
# results: history, model
import contextlib

import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def run_epoch(self, batches, training):
        context = torch.no_grad() if training else contextlib.nullcontext()  # PRIMARY
        total = 0.0
        with context:
            for x, y in batches:
                loss = F.mse_loss(self.model(x), y)
                if training:
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                total += loss.item()
        return total / len(batches)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
trainer = Trainer(model)
train = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
valid = [(torch.randn(4, 3), torch.randn(4, 1))]
history = []
for _ in range(2):
    history.append((trainer.run_epoch(train, training=True), trainer.run_epoch(valid, training=False)))
