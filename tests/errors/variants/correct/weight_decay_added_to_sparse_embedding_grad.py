# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 4
# trigger: a recommender trains an nn.Embedding(sparse=True) and adds L2 weight decay to the
#   gradients by hand before the step (p.grad = p.grad + decay * p)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(10, 4, sparse=True)
        self.items = nn.Embedding(12, 4, sparse=True)

    def forward(self, users, items):
        return (self.users(users) * self.items(items)).sum(dim=1)


def add_weight_decay(model, decay):
    with torch.no_grad():
        for p in model.parameters():
            p.grad = p.grad.to_dense() + decay * p  # PRIMARY


torch.manual_seed(0)
model = Recommender()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
users, items = torch.tensor([0, 3, 5, 7]), torch.tensor([1, 2, 8, 11])
ratings = torch.tensor([1.0, 0.0, 1.0, 0.5])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(users, items) - ratings).pow(2).mean()
    loss.backward()
    add_weight_decay(model, 0.01)
    optimizer.step()
    losses.append(loss.item())
