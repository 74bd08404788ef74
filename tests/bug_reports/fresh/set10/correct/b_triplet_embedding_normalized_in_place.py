"""EmbeddingNetL2 normalizing its output in place after pow() saved it.
Source: https://github.com/adambielski/siamese-triplet/issues/51 (normalize out of place)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(16, 32), nn.PReLU(), nn.Linear(32, 2))

    def forward(self, x):
        return self.fc(x)


class EmbeddingNetL2(EmbeddingNet):
    def forward(self, x):
        output = super().forward(x)
        output = output / output.pow(2).sum(1, keepdim=True).sqrt()
        return output


class TripletNet(nn.Module):
    def __init__(self, embedding_net):
        super().__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2, x3):
        return self.embedding_net(x1), self.embedding_net(x2), self.embedding_net(x3)


class TripletLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        distance_positive = (anchor - positive).pow(2).sum(1)
        distance_negative = (anchor - negative).pow(2).sum(1)
        return F.relu(distance_positive - distance_negative + self.margin).mean()


model = TripletNet(EmbeddingNetL2())
loss_fn = TripletLoss(margin=0.2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
anchor = torch.randn(32, 16)
positive = anchor + 0.1 * torch.randn(32, 16)
negative = torch.randn(32, 16)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(*model(anchor, positive, negative))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
