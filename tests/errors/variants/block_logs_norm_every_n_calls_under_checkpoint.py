# message: torch.utils.checkpoint: A different number of tensors was saved during the original forward and
#   recomputation.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 10
# trigger: a block run under checkpoint(..., use_reentrant=False) counts its calls and logs the norm
#   of its activations on its first call and every second one after (with gradients on); the
#   recomputation in backward is a call of its own, so it does not log when the original forward
#   did, and saves fewer tensors
# source: none found; the pattern as users write it (periodic activation logging inside modules)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self, log_every):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.log_every = log_every
        self.calls = 0
        self.norms = []

    def forward(self, x):
        self.calls += 1
        h = torch.tanh(self.layer(x))
        if self.calls % self.log_every == 1:
            self.norms.append(h.norm().item())  # PRIMARY
        return x + h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(log_every=2)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=False))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
