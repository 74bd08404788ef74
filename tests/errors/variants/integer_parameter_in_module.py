# message: Only Tensors of floating point and complex dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer_factory)
# trigger: a module's __init__ wraps an integer tensor (written without decimal points) in
#   nn.Parameter
# source: none found; the pattern as users write it
# results: model, loss
import torch
from torch import nn


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1, 2, 3]))  # PRIMARY
        self.shift = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        return x * self.scale + self.shift


torch.manual_seed(0)
model = Affine()
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
