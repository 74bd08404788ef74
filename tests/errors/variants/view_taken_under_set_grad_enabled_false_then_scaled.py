# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given
#   that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by
#   moving both the view and the inplace either both inside the no_grad block (if you don't want the
#   inplace to be tracked) or both outside (if you want the inplace to be tracked).
# code: AD105 (catalogue: view_nograd_inplace)
# set: 11
# trigger: a module's forward opens torch.set_grad_enabled(self.track_statistics) (a flag, False
#   here) to log the mean of the leading features, takes them with h.narrow(1, 0, 2) inside that
#   block, and scales the narrowed view in place by a learned gain after it
# source: none found; the pattern as users write it (statistics logged under a grad-mode flag)
# results: losses, model
import torch
from torch import nn


class GainedEncoder(nn.Module):
    def __init__(self, track_statistics=False):
        super().__init__()
        self.track_statistics = track_statistics
        self.encoder = nn.Linear(3, 4)
        self.gain = nn.Parameter(torch.ones(2))
        self.head = nn.Linear(4, 1)
        self.logged = []

    def forward(self, x):
        h = self.encoder(x)
        with torch.set_grad_enabled(self.track_statistics):
            leading = h.narrow(1, 0, 2)  # PRIMARY
            self.logged.append(leading.mean().item())
        leading.mul_(self.gain)
        return self.head(h)


torch.manual_seed(0)
model = GainedEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
