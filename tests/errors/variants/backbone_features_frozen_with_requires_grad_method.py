# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 6
# trigger: to train only the head, a transfer-learning model's forward calls
#   features.requires_grad_(False) on the backbone's output
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TransferModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        features = self.backbone(x)
        features.requires_grad_(False)  # PRIMARY
        return self.head(features)


torch.manual_seed(0)
model = TransferModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 5), torch.tensor([0, 1, 0, 1, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
