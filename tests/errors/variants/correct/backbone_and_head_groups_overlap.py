# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 5
# trigger: fine-tuning with a larger learning rate for the new head: the first group is all of
#   model.parameters(), the second the head's parameters, which the first already holds
# source: https://github.com/YehLi/xmodaler/issues/40 (per-part learning rates)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD([
    {"params": model.backbone.parameters()},  # PRIMARY
    {"params": model.head.parameters(), "lr": 0.1},
], lr=0.01)
x, y = torch.randn(6, 5), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
