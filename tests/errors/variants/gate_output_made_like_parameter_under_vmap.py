# message: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that has more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of inplace arithmetic. If said operator is being called inside the PyTorch framework, please file a bug report instead.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 9
# trigger: a per-example gating function makes its output with torch.zeros_like(self.gate), a
#   parameter the function closes over (it has no batch dimension), and fills it from the example;
#   the module maps the function over the batch with torch.func.vmap
# source: none found; the pattern as users write it (zeros_like of the wrong tensor)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class PerExampleGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Parameter(torch.ones(3))

    def gated(self, x):
        out = torch.zeros_like(self.gate)  # PRIMARY
        out[:2] = x[:2] * self.gate[:2]
        out[2:] = x[2:]
        return out

    def forward(self, batch):
        return torch.func.vmap(self.gated)(batch)


torch.manual_seed(0)
model = PerExampleGate()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
