# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD309 (catalogue: grad_none_frozen_parameter)
# set: 10
# trigger: a Trainer-like class trains only the head by passing its parameters to
#   loss.backward(inputs=...), then updates every parameter of the model by hand with p -= lr * p.grad;
#   the backbone's .grad is None
# source: none found; the pattern as users write it (backward(inputs=...) to restrict training)
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.backbone(x)))


class HeadTrainer:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr
        self.losses = []

    def step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        loss.backward(inputs=list(self.model.head.parameters()))
        with torch.no_grad():
            for parameter in self.model.parameters():
                if parameter.grad is None:
                    continue
                parameter -= self.lr * parameter.grad  # PRIMARY
                parameter.grad = None
        self.losses.append(loss.item())


torch.manual_seed(0)
model = Model()
trainer = HeadTrainer(model, lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    trainer.step(x, y)
