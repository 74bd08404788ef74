# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss, grad_inside_no_grad_block)
# set: 7
# trigger: a model's forward runs under torch.set_grad_enabled(self.training) to save memory in
#   evaluation; a Trainer-like class validates first with model.eval() and never calls
#   model.train() again, so the training step computes its loss with gradients off
# source: none found; the pattern as users write it (model.train() forgotten after validation)
# results: trainer.losses, trainer.scores, model
import torch
from torch import nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        with torch.set_grad_enabled(self.training):
            return self.lin(x)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses, self.scores = [], []

    def validate(self, x, y):
        self.model.eval()  # PRIMARY
        self.scores.append(F.mse_loss(self.model(x), y).item())

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.item())


torch.manual_seed(0)
model = Regressor()
trainer = Trainer(model)
x, y = torch.randn(4, 3), torch.randn(4, 1)
for _ in range(2):
    trainer.validate(x, y)
    trainer.train_step(x, y)
