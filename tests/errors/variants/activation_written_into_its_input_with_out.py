# message: sigmoid(): functions with out=... arguments don't support automatic differentiation, but one of
#   the arguments requires grad.
# code: AD117 (catalogue: out_requires_grad)
# set: 10
# trigger: to save memory, a module's forward writes the sigmoid of a layer's output back into that
#   output with torch.sigmoid(h, out=h), as a statement
# source: none found; the pattern as users write it (out= to avoid an allocation)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.layer(x)
        torch.sigmoid(h, out=h)  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = Gate()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
