# message: A view was created in no_grad mode and its base or another view of its base has been modified inplace with grad mode enabled.
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 4
# trigger: a model's forward takes a reference row of its hidden features under no_grad (a
#   constant anchor), then shifts the features in place with a learned bias and uses the anchor
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class AnchoredModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.shift = nn.Parameter(torch.full((4,), 0.1))

    def forward(self, x):
        h = self.lin(x) + self.shift  # PRIMARY
        with torch.no_grad():
            anchor = h[0]
        return (h - anchor).pow(2).sum(dim=1, keepdim=True)


torch.manual_seed(0)
model = AnchoredModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(5, 3), torch.rand(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
