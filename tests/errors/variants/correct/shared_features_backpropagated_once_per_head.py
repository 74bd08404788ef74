# message: Trying to backward through the graph a second time (or directly access saved tensors after
#   they have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the
#   graph a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 12
# trigger: a multi-head model computes the shared trunk's features once per batch and calls
#   backward() on each head's loss inside a loop over the heads; the first backward() frees the
#   trunk's graph
# source: none found; the pattern as users write it (one backward per task head)
# results: losses, model
import torch
from torch import nn


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])


torch.manual_seed(0)
model = MultiHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, targets = torch.randn(5, 3), [torch.randn(5, 1), torch.randn(5, 1)]
losses = []
for _ in range(2):
    optimizer.zero_grad()
    features = model.trunk(x)
    head_losses = [(head(features) - target).pow(2).mean() for head, target in zip(model.heads, targets)]
    sum(head_losses).backward()  # PRIMARY
    losses.extend(loss.item() for loss in head_losses)
    optimizer.step()
