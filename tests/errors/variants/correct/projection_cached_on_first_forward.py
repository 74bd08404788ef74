# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call .backward()
#   or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second
#   time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 13
# trigger: a module projects its learned positional table once, on the first forward(), and keeps the
#   result on self to save the work; the second step's backward() goes through the first step's
#   projection, whose graph the first backward() freed
# source: none found; the pattern as users write it (results of parameters cached on the module)
# results: model, losses
import torch
from torch import nn


class PositionalEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(5, 4))
        self.project = nn.Linear(4, 4)
        self.projected = None

    def forward(self, x):
        projected = self.project(self.table)  # PRIMARY
        return torch.tanh(x + projected).mean(dim=-1)


torch.manual_seed(0)
model = PositionalEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(3, 5, 4), torch.randn(3, 5)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
