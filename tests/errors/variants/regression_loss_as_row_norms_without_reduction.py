# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 12
# trigger: a trajectory regressor's Trainer-like step measures the error of each example as the
#   Euclidean norm of its residual, (pred - target).norm(dim=1), and calls backward() on that vector
# source: none found; the pattern as users write it (per-example distances used as the loss)
# results: losses, model
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def training_step(self, x, target):
        self.optimizer.zero_grad()
        loss = (self.model(x) - target).norm(dim=1)  # PRIMARY
        loss.backward()
        self.optimizer.step()
        return loss.mean().item()


torch.manual_seed(0)
model = nn.Linear(3, 2)
trainer = Trainer(model)
x, target = torch.randn(5, 3), torch.randn(5, 2)
losses = [trainer.training_step(x, target) for _ in range(2)]
