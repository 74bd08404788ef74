# message: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved intermediate values after calling .backward() or autograd.grad().
# code: AD302 (catalogue: backward_twice)
# set: 9
# trigger: a model memoises the projection of its fixed relative-position table with
#   functools.lru_cache on a method: the cached tensor keeps the graph of the first call, which the
#   first backward() frees
# source: none found; the pattern as users write it (caching an expensive computation on parameters)
# results: losses, model
import functools

import torch
from torch import nn
import torch.nn.functional as F


class RelativeBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 3))
        self.project = nn.Linear(3, 1)
        self.mix = nn.Linear(4, 4)

    @functools.lru_cache(maxsize=None)  # PRIMARY
    def bias(self):
        return torch.tanh(self.project(self.table)).squeeze(-1)

    def forward(self, x):
        return self.mix(x) + self.bias()


torch.manual_seed(0)
model = RelativeBias()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
