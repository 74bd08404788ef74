"""Matrix factorisation for implicit feedback, trained with the BPR loss: user and item
embeddings made with `sparse=True` (only the rows of a batch get a gradient), and the L2
regularisation given as SGD's `weight_decay`. SGD adds the decay to the gradient
(`grad.add(param, alpha=weight_decay)`): a sparse gradient plus a dense parameter, which fails
in `optimizer.step()` with "add(sparse, dense) is not supported. Use add(dense, sparse)
instead."
Source: https://github.com/pytorch/pytorch/issues/1285 (comment of 2020-09-17, on
L2-regularised matrix factorisation: "Attempting to apply SGD weight decay to a sparse embedding
layer currently gives the error ..."; weight decay is not defined for sparse gradients, #30402);
the fix keeps the weight decay and gives the embeddings dense gradients.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_USERS, N_ITEMS, DIM = 20, 30, 8


class MatrixFactorization(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(N_USERS, DIM, sparse=True)
        self.items = nn.Embedding(N_ITEMS, DIM, sparse=True)

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
