# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a
#   normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 13
# trigger: an implicit field's coordinate grid is a functools.cached_property of the module, built
#   under torch.inference_mode() because it "needs no gradient"; the first Linear of forward saves it
# source: none found; the pattern as users write it (constant grids cached on first access)
# results: losses, field
import functools

import torch
from torch import nn


class ImplicitField(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size
        self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

    @functools.cached_property
    def grid(self):
        with torch.inference_mode():  # PRIMARY
            axis = torch.linspace(-1, 1, self.size)
            ys, xs = torch.meshgrid(axis, axis, indexing="ij")
            return torch.stack([xs, ys], dim=-1).reshape(-1, 2)

    def forward(self):
        return self.net(self.grid).reshape(self.size, self.size)


torch.manual_seed(0)
field = ImplicitField(4)
target = torch.randn(4, 4)
optimizer = torch.optim.SGD(field.parameters(), lr=0.1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (field() - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
