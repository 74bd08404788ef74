"""The embeddings give dense gradients (no sparse=True), so SGD's weight decay applies to them
as the program asks.
Source: https://github.com/pytorch/pytorch/issues/1285."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_USERS, N_ITEMS, DIM = 20, 30, 8


class MatrixFactorization(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(N_USERS, DIM)
        self.items = nn.Embedding(N_ITEMS, DIM)

    def forward(self, user, item):
        return (self.users(user) * self.items(item)).sum(-1)


model = MatrixFactorization()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=1e-3)
users = torch.randint(0, N_USERS, (64,))
liked = torch.randint(0, N_ITEMS, (64,))
not_liked = torch.randint(0, N_ITEMS, (64,))

losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = -F.logsigmoid(model(users, liked) - model(users, not_liked)).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
