# message: torch.utils.checkpoint: A different number of tensors was saved during the original forward
#   and recomputation.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 11
# trigger: a model checkpoints a block with dropout (use_reentrant=False); the Trainer-like step runs
#   its callbacks between the loss and loss.backward(), and a quick validation callback puts the
#   model in eval mode without putting it back, so the recomputation in backward runs without
#   dropout and saves fewer tensors
# source: none found; the pattern as users write it (callbacks that switch train/eval mode)
# results: trainer.losses, trainer.validation, model
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class CheckpointedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Dropout(0.25), nn.Linear(8, 4))
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=False))


class Trainer:
    def __init__(self, model, x_val, y_val):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.x_val, self.y_val = x_val, y_val
        self.losses, self.validation = [], []

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            self.validation.append((self.model(self.x_val) - self.y_val).pow(2).mean().item())

    def step(self, x, y):
        self.model.train()
        self.optimizer.zero_grad()
        loss = (self.model(x) - y).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        self.validate()  # PRIMARY
        self.losses.append(loss.item())


torch.manual_seed(0)
model = CheckpointedNet()
trainer = Trainer(model, torch.randn(4, 3), torch.randn(4, 1))
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    trainer.step(x, y)
