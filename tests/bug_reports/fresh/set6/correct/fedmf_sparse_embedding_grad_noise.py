"""Federated matrix factorization for recommendation (SGDMF): each client trains user and item
embeddings with `sparse=True`, then adds Gaussian noise to the embedding gradients for
differential privacy before the step. The gradient of a sparse embedding is a sparse tensor, and
`sparse_grad + dense_noise` is refused.
Source: https://github.com/alibaba/FederatedScope/issues/779 ("add(sparse, dense)" errors in
trainer_sgdmf.py; fixed by `grad.to_dense()` when `weight.grad.is_sparse` before adding the noise).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
NUM_USERS, NUM_ITEMS, DIM = 20, 30, 8


class MatrixFactorization(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_user = nn.Embedding(NUM_USERS, DIM, sparse=True)
        self.embed_item = nn.Embedding(NUM_ITEMS, DIM, sparse=True)

    def forward(self, users, items):
        return (self.embed_user(users) * self.embed_item(items)).sum(-1)


def add_dp_noise(model, sigma):
    for p in model.parameters():
        noise = torch.randn(p.shape) * sigma
        grad = p.grad.to_dense() if p.grad.is_sparse else p.grad
        p.grad = grad + noise


def local_train(model, ratings, steps=3, sigma=0.01):
    users, items, values = ratings
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        loss = ((model(users, items) - values) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        add_dp_noise(model, sigma)
        optimizer.step()
        losses.append(loss.detach())
    return losses


model = MatrixFactorization()
ratings = (torch.randint(0, NUM_USERS, (40,)), torch.randint(0, NUM_ITEMS, (40,)), torch.rand(40) * 5)
losses = local_train(model, ratings)
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
