# message: Output 1 of SplitBackward0 is a view and its base or another view of its base has been
#   modified inplace. This view is the output of a function that returns multiple views.
# code: AD138 (catalogue: split_base_modified)
# set: 7
# trigger: a flow coupling layer's forward splits the network output with torch.split (the
#   function, not the method) into shift and log-scale, then applies F.relu(h, inplace=True) to
#   the whole output for a gated skip path
# source: none found; the pattern as users write it (normalizing flows, affine coupling)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 4)

    def forward(self, x):
        h = self.net(x)
        shift, log_scale = torch.split(h, 2, dim=1)
        gate = F.relu(h)  # PRIMARY
        return x * log_scale.exp() + shift + gate.mean(1, keepdim=True)


torch.manual_seed(0)
model = Coupling()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(5, 2), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
