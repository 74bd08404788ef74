# message: torch.utils.checkpoint: A different number of tensors was saved during the original
#   forward and recomputation.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 3
# trigger: a residual block with stochastic depth draws its skip decision from Python's `random`,
#   which checkpoint does not replay: the recomputation in backward draws again and takes the
#   other branch
# source: https://github.com/pytorch/pytorch/issues/96136 (checkpoint runs the forward twice)
# results: losses, model
import random

import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class ResidualBlock(nn.Module):
    def __init__(self, width, drop_prob):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.Tanh())
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.training and random.random() < self.drop_prob:  # PRIMARY
            return x
        return x + self.mlp(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(ResidualBlock(4, 0.5) for _ in range(3))
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.head(x)


random.seed(3)
torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
