# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 14
# trigger: a multi-task model keeps its task heads in a plain Python dict on self (not
#   nn.ModuleDict), and the heads' optimizer (the backbone is frozen) is built on the model's
#   parameters, which are none
# source: none found; the pattern as users write it (heads = {name: nn.Linear(...)})
# results: model, losses
import torch
from torch import nn


class TaskHeads(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.heads = nn.ModuleDict({task: nn.Linear(4, size) for task, size in tasks.items()})  # PRIMARY

    def forward(self, features):
        return {task: head(features) for task, head in self.heads.items()}


torch.manual_seed(0)
backbone = nn.Linear(3, 4).requires_grad_(False)
model = TaskHeads({"age": 1, "gender": 2})
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, age, gender = torch.randn(5, 3), torch.randn(5, 1), torch.tensor([0, 1, 1, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    out = model(backbone(x))
    loss = nn.functional.mse_loss(out["age"], age) + nn.functional.cross_entropy(out["gender"], gender)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
