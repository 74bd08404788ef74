# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 3
# trigger: differential-privacy style noise is added in place to every parameter's gradient
#   (p.grad.add_(noise)); the model's embedding was built with sparse=True
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = nn.Embedding(8, 3, sparse=True)
        self.score = nn.Linear(3, 1)

    def forward(self, ids):
        return self.score(self.items(ids)).squeeze(-1)


torch.manual_seed(0)
model = Recommender()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ids, clicks = torch.tensor([1, 4, 6]), torch.tensor([1.0, 0.0, 1.0])
generator = torch.Generator().manual_seed(1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(ids) - clicks).pow(2).mean()
    loss.backward()
    for p in model.parameters():
        noise = 0.01 * torch.randn(p.shape, generator=generator)
        p.grad = noise + p.grad  # PRIMARY
    optimizer.step()
    losses.append(loss.item())
