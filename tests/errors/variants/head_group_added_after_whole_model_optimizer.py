# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 8
# trigger: the optimizer is created over model.parameters(); the head's own group (a larger
#   learning rate) is then added with optimizer.add_param_group, so the head is in both groups
# source: none found; the pattern as users write it (discriminative learning rates with
#   add_param_group)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)  # PRIMARY
optimizer.add_param_group({"params": model.head.parameters(), "lr": 0.1})
x, y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
