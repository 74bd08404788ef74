# message: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without passing the `inputs` argument.
# code: AD126 (catalogue: checkpoint_reentrant_grad)
# set: 8
# trigger: the model's config binds checkpoint with functools.partial(checkpoint, use_reentrant=True);
#   the training step logs the gradient norm with torch.autograd.grad(..., retain_graph=True)
#   before loss.backward()
# source: none found; the pattern as users write it (a checkpoint function chosen once in the config)
# results: norms, model
import functools

import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

checkpointed = functools.partial(checkpoint, use_reentrant=True)  # PRIMARY


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(3, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpointed(self.block, self.stem(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
norms = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    norms.append(torch.stack([g.norm() for g in grads]).norm().item())
    loss.backward()
    optimizer.step()
