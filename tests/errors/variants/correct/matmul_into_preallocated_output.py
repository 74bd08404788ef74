# message: matmul(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# trigger: a module's forward writes x @ weight into a preallocated tensor with out= (the
#   weight is a Parameter), through torch.matmul rather than torch.mul
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Projector(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        out = torch.empty(x.shape[0], 3)
        out = torch.matmul(x, self.weight)  # PRIMARY
        return out


torch.manual_seed(0)
model = Projector()
loss = model(torch.randn(2, 4)).pow(2).sum()
loss.backward()
