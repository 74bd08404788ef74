# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace)
# set: 12
# trigger: a Trainer-like class applies a max-norm constraint after each optimizer step with
#   weight.renorm_(2, 0, max_norm) on the layer's weight, outside torch.no_grad()
# source: none found; the pattern as users write it (max-norm regularisation, as in dropout papers)
# results: losses, model
import torch
from torch import nn


class Trainer:
    def __init__(self, model, max_norm):
        self.model = model
        self.max_norm = max_norm
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

    def apply_constraints(self):
        self.model[0].weight.renorm_(2, 0, self.max_norm)  # PRIMARY

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = (self.model(x) - y).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        self.apply_constraints()
        return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
trainer = Trainer(model, max_norm=0.5)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = [trainer.step(x, y) for _ in range(2)]
