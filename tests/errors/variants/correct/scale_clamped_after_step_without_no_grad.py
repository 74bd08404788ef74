# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 4
# trigger: projected gradient descent: after optimizer.step() a Trainer keeps a learned scale
#   positive with model.scale.clamp_(min=...) outside torch.no_grad()
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ScaledModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.scale = nn.Parameter(torch.tensor(0.05))

    def forward(self, x):
        return self.lin(x) * self.scale


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

    def fit_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            self.model.scale.clamp_(min=1e-2)  # PRIMARY
        return loss.item()


torch.manual_seed(0)
model = ScaledModel()
trainer = Trainer(model)
x, y = torch.randn(6, 3), -torch.ones(6, 1)
losses = [trainer.fit_step(x, y) for _ in range(3)]
