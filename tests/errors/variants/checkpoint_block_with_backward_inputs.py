# message: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward().
# code: AD126 (catalogue: checkpoint_reentrant_grad)
# set: 2
# trigger: a module checkpoints its block with torch.utils.checkpoint.checkpoint(self.block, ...,
#   use_reentrant=True); an input attribution calls backward(inputs=[x]) so that only the input
#   gets a gradient
# source: none found; the pattern as users write it
# results: x.grad, model
import torch
from torch import nn
import torch.utils.checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        h = torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=True)  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = Net()
x = torch.randn(4, 3, requires_grad=True)
model(x).sum().backward(inputs=[x])
