# message: step() has already been called since the last update().
# code: AD150 (catalogue: amp_step_twice_in_one_iteration)
# set: 8
# trigger: multi-task training alternates the tasks inside one iteration, each task with its own
#   backward() and scaler.step(optimizer) on the shared optimizer; scaler.update() runs once after
#   the loop over the tasks (a dict of batches)
# source: none found; the pattern as users write it (GradScaler's docs: one update() per step)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class SharedTrunk(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.heads = nn.ModuleDict({"depth": nn.Linear(4, 1), "edges": nn.Linear(4, 1)})

    def forward(self, x, task):
        return self.heads[task](torch.relu(self.trunk(x)))


torch.manual_seed(0)
model = SharedTrunk()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
tasks = {"depth": (torch.randn(4, 3), torch.randn(4, 1)), "edges": (torch.randn(4, 3), torch.randn(4, 1))}
losses = []
for _ in range(2):
    for task, (x, y) in tasks.items():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x, task), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()  # PRIMARY
        losses.append(loss.item())
