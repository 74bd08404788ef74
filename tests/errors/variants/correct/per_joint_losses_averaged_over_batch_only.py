# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 10
# trigger: a pose regressor's Trainer-like training_step averages the squared errors over the batch
#   only (mean(dim=0)) to log one error per joint, and calls backward() on that per-joint vector
# source: none found; the pattern as users write it (per-output losses kept for logging)
# results: trainer.history, model
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.history = []

    def training_step(self, x, joints):
        self.optimizer.zero_grad()
        per_joint = (self.model(x) - joints).pow(2).mean(dim=0)
        self.history.append(per_joint.tolist())
        per_joint.sum().backward()  # PRIMARY
        self.optimizer.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
trainer = Trainer(model)
x, joints = torch.randn(6, 3), torch.randn(6, 4)
for _ in range(2):
    trainer.training_step(x, joints)
