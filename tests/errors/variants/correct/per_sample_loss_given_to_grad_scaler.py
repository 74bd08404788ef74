# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 4
# trigger: a mixed-precision training step: the loss is made with reduction="none" (kept from
#   per-sample logging) and given to scaler.scale(loss).backward()
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu")

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x), y)  # PRIMARY
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.mean().item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
trainer = Trainer(model)
x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
losses = [trainer.training_step(x, y) for _ in range(2)]
