# message: A view was created in no_grad mode and its base or another view of its base has been
#   modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone,
#   it is forbidden. You can clarify your code by moving both the view and the inplace either both
#   inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you
#   want the inplace to be tracked).
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 12
# trigger: a module's forward keeps the transposed features (h.t(), a view) from a torch.no_grad()
#   logging block to compute a Gram matrix later, and clamps h in place in between
# source: none found; the pattern as users write it (views kept from logging blocks)
# results: losses, model
import torch
from torch import nn


class GramModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.log = []

    def forward(self, x):
        h = self.encoder(x)
        with torch.no_grad():
            h_t = h.t()  # PRIMARY
            self.log.append(h_t.abs().mean().item())
        h.clamp_(min=-1.0, max=1.0)
        return h_t @ h


torch.manual_seed(0)
model = GramModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
