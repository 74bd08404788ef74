# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 4
# trigger: a multi-task model keeps its per-task heads in a plain dict, so the module registers
#   none of them and model.parameters() is empty
# source: https://github.com/pytorch/examples/issues/277 (layers the module does not register)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TaskHeads(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.heads = {task: nn.Linear(4, 1) for task in tasks}  # PRIMARY

    def forward(self, x, task):
        return self.heads[task](x)


torch.manual_seed(0)
model = TaskHeads(["price", "volume"])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 4)
targets = {"price": torch.randn(5, 1), "volume": torch.randn(5, 1)}
losses = []
for task, y in targets.items():
    optimizer.zero_grad()
    loss = F.mse_loss(model(x, task), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
