# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 5
# trigger: multi-task learning with learned uncertainty weights: the model holds the task
#   log-variances as one nn.Parameter and a Trainer-like class gives it alone to a second optimizer
# source: none found; the pattern as users write it
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TwoTaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return [head(h) for head in self.heads]


class Trainer:
    def __init__(self, model):
        self.model = model
        network = [p for name, p in model.named_parameters() if name != "log_vars"]
        self.optimizer = torch.optim.SGD(network, lr=0.1)
        self.weight_optimizer = torch.optim.SGD(model.log_vars, lr=0.05)  # PRIMARY
        self.losses = []

    def step(self, x, targets):
        self.optimizer.zero_grad()
        self.weight_optimizer.zero_grad()
        task_losses = torch.stack([F.mse_loss(out, t) for out, t in zip(self.model(x), targets)])
        loss = (torch.exp(-self.model.log_vars) * task_losses + self.model.log_vars).sum()
        loss.backward()
        self.optimizer.step()
        self.weight_optimizer.step()
        self.losses.append(loss.item())


torch.manual_seed(0)
model = TwoTaskModel()
trainer = Trainer(model)
x = torch.randn(5, 3)
for _ in range(2):
    trainer.step(x, [torch.randn(5, 1), torch.randn(5, 1) * 2])
