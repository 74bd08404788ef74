# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 11
# trigger: a contrastive loss keeps its learned temperature positive with a hand-written
#   straight-through clamp Function that works in place (clamp_ and ctx.mark_dirty); the Trainer
#   applies it to the temperature itself, a leaf made with requires_grad=True
# source: none found; the pattern as users write it (learned temperatures kept in range by a
#   straight-through clamp)
# results: trainer.losses, trainer.temperature, model
import torch
from torch import nn
import torch.nn.functional as F


class ClampStraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0.05)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class ContrastiveTrainer:
    def __init__(self, model):
        self.model = model
        self.temperature = torch.tensor(0.5, requires_grad=True)
        self.optimizer = torch.optim.SGD(list(model.parameters()) + [self.temperature], lr=0.1)
        self.losses = []

    def step(self, a, b):
        self.optimizer.zero_grad()
        za, zb = F.normalize(self.model(a), dim=1), F.normalize(self.model(b), dim=1)
        temperature = ClampStraightThrough.apply(self.temperature.clone())  # PRIMARY
        logits = za @ zb.T / temperature
        loss = F.cross_entropy(logits, torch.arange(len(a)))
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Linear(3, 4)
trainer = ContrastiveTrainer(model)
a = torch.randn(5, 3)
b = a + 0.1 * torch.randn(5, 3)
for _ in range(2):
    trainer.step(a, b)
