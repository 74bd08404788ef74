# message: Only Tensors of floating point and complex dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer_factory)
# set: 10
# trigger: a layer with a learned pruning mask initialises the mask from a magnitude comparison
#   (weight.abs() > threshold), a boolean tensor, and wraps it in nn.Parameter
# source: none found; the pattern as users write it (learned masks started from magnitude pruning)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class MaskedLinear(nn.Module):
    def __init__(self, inputs, outputs, threshold):
        super().__init__()
        self.base = nn.Linear(inputs, outputs)
        self.mask = nn.Parameter(self.base.weight.abs() > threshold)  # PRIMARY

    def forward(self, x):
        return F.linear(x, self.base.weight * self.mask, self.base.bias)


torch.manual_seed(0)
model = nn.Sequential(MaskedLinear(3, 4, threshold=0.2), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
