# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 3
# trigger: the usual weight-decay / no-decay split by parameter name: the decay filter only
#   excludes biases, the no-decay filter also takes the norm layer's weight, so it is in both
# source: https://github.com/namisan/mt-dnn/pull/37 (a no_decay split by name gone wrong)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 4)
        self.norm = nn.LayerNorm(4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.norm(self.linear(x))))


def parameter_groups(model, weight_decay):
    named = list(model.named_parameters())
    decay = [p for n, p in named if not n.endswith("bias")]  # PRIMARY
    no_decay = [p for n, p in named if n.endswith("bias") or n.startswith("norm.")]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.AdamW(parameter_groups(model, 0.1), lr=0.01)
x, y = torch.randn(8, 3), torch.randn(8, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
