# message: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a
#   Tensor `other` in extra_args that has more elements than `self`.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 3
# trigger: a module copies its input into a preallocated buffer (register_buffer) in forward;
#   the training loop maps the module over the samples of a batch with torch.func.vmap, and
#   the buffer has no batch dimension
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import vmap


class Clipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)
        self.register_buffer("scratch", torch.zeros(3))

    def forward(self, x):
        features = x.clone()  # PRIMARY
        return self.linear(features.clamp(-1.0, 1.0))


torch.manual_seed(0)
model = Clipped()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3) * 2, torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(vmap(model)(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
