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
        features = features.detach()  # PRIMARY
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
