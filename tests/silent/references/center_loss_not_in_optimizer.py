"""The center loss trained with the model: one optimizer over both."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CenterLoss(nn.Module):
    def __init__(self, classes, dims):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(classes, dims))

    def forward(self, features, labels):
        return (features - self.centers[labels]).pow(2).sum(1).mean()


def train(model, criterion_cent, x, y, epochs=3):
    optimizer = torch.optim.SGD([*model.parameters(), *criterion_cent.parameters()], lr=0.1)
    for _ in range(epochs):
        features = model(x)
        loss = F.cross_entropy(features, y) + 0.1 * criterion_cent(features, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in [*model.parameters(), *criterion_cent.parameters()]]


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
centers = CenterLoss(3, 3)
x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
result = train(model, centers, x, y)
