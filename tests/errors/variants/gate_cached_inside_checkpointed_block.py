# message: torch.utils.checkpoint: A different number of tensors was saved during the original
#   forward and recomputation.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 5
# trigger: a block run under checkpoint(..., use_reentrant=False) caches sigmoid(gate) on self the
#   first time its forward runs; the recomputation finds the cache and saves fewer tensors
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class GatedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.gate = nn.Parameter(torch.zeros(4))
        self.cached_gate = None

    def forward(self, x):
        if self.cached_gate is None:  # PRIMARY
            self.cached_gate = torch.sigmoid(self.gate)
        return torch.tanh(self.lin(x)) * self.cached_gate


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = GatedBlock()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=False))


torch.manual_seed(0)
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
