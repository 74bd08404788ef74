# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 2
# trigger: a feature-scaling module keeps its learned scales in a plain dict of nn.Parameter,
#   so model.parameters() is empty
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Scaler(nn.Module):
    def __init__(self, names):
        super().__init__()
        self.scales = {name: nn.Parameter(torch.ones(2)) for name in names}  # PRIMARY

    def forward(self, features):
        return sum(features[name] * self.scales[name] for name in sorted(features))


torch.manual_seed(0)
model = Scaler(["audio", "video"])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
features = {"audio": torch.randn(3, 2), "video": torch.randn(3, 2)}
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(features), torch.ones(3, 2))
    losses.append(loss.item())
    loss.backward()
    optimizer.step()
