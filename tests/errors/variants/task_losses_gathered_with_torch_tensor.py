# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: no_grad_loss, grad_inside_no_grad_block)
# set: 3
# trigger: a multi-task model returns a dict of per-task losses; the total is built with
#   torch.tensor([...]) of those losses, which copies their values into a new tensor with no graph
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.heads = nn.ModuleDict({"depth": nn.Linear(4, 1), "normal": nn.Linear(4, 1)})

    def forward(self, x, targets):
        features = torch.tanh(self.body(x))
        return {name: F.mse_loss(head(features), targets[name]) for name, head in self.heads.items()}


torch.manual_seed(0)
model = MultiTask()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 3)
targets = {"depth": torch.randn(6, 1), "normal": torch.randn(6, 1)}
losses = []
for _ in range(2):
    optimizer.zero_grad()
    task_losses = model(x, targets)
    loss = torch.tensor([task_losses["depth"], task_losses["normal"]]).sum()  # PRIMARY
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
