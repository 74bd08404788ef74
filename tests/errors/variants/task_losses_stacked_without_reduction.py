# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 9
# trigger: a multi-task trainer stacks the task losses into one tensor to log them, and calls
#   backward() on the stack, forgetting to add them up
# source: none found; the pattern as users write it (torch.stack of task losses)
# results: history, model
import torch
from torch import nn
import torch.nn.functional as F


class MultiTaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.regress = nn.Linear(4, 1)
        self.classify = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return self.regress(h), self.classify(h)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.history = []

    def step(self, x, value, label):
        self.optimizer.zero_grad()
        predicted_value, logits = self.model(x)
        losses = torch.stack([F.mse_loss(predicted_value, value), F.cross_entropy(logits, label)])
        losses.backward()  # PRIMARY
        self.optimizer.step()
        self.history.append(losses.tolist())


torch.manual_seed(0)
model = MultiTaskModel()
trainer = Trainer(model)
x, value, label = torch.randn(6, 3), torch.randn(6, 1), torch.tensor([0, 1, 1, 0, 1, 0])
for _ in range(2):
    trainer.step(x, value, label)
history = trainer.history
