"""Explicit matrix factorization of a user-item rating matrix as a PyTorch model (user and item
embeddings, the prediction their dot product), trained rating by rating with SGD: each step calls
`loss.backward()` and `optimizer.step()`, but never `optimizer.zero_grad()`. The gradients of every
rating seen so far pile up in the embeddings' `.grad`, so each step applies the sum of all past
gradients; nothing fails and the loss is printed. The post's update of 8/4/2020: "Added missing
optimizer.zero_grad() call".
Source: https://www.ethanrosenthal.com/2017/06/20/matrix-factorization-in-pytorch/
expect: silent"""
import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)

n_users, n_items = 12, 9
ratings = np.zeros((n_users, n_items))
observed = np.random.rand(n_users, n_items) < 0.4
ratings[observed] = np.random.randint(1, 6, size=observed.sum())


class MatrixFactorization(torch.nn.Module):
    def __init__(self, n_users, n_items, n_factors=5):
        super().__init__()
        self.user_factors = torch.nn.Embedding(n_users, n_factors, sparse=True)
        self.item_factors = torch.nn.Embedding(n_items, n_factors, sparse=True)

    def forward(self, user, item):
        return (self.user_factors(user) * self.item_factors(item)).sum(1)


model = MatrixFactorization(n_users, n_items, n_factors=5)
loss_func = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

rows, cols = ratings.nonzero()
p = np.random.permutation(len(rows))
rows, cols = rows[p], cols[p]

losses = []
for row, col in zip(*(rows, cols)):
    rating = torch.FloatTensor([ratings[row, col]])
    row = torch.LongTensor([int(row)])
    col = torch.LongTensor([int(col)])

    optimizer.zero_grad()
    prediction = model(row, col)
    loss = loss_func(prediction, rating)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses),
          "user_factors": model.user_factors.weight.detach().clone(),
          "item_factors": model.item_factors.weight.detach().clone()}
