# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not
#   supported. This is caused by calling in-place forward function with a negative slope, please
#   call out-of-place version instead.
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 5
# trigger: a model computes |h| as F.leaky_relu(h, negative_slope=-1.0, inplace=True) in its
#   forward (saving memory), which autograd cannot differentiate in place
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class MagnitudeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 5)
        self.fc2 = nn.Linear(5, 1)

    def forward(self, x):
        h = self.fc1(x)
        h = F.leaky_relu(h, negative_slope=-1.0)  # PRIMARY
        return self.fc2(h)


torch.manual_seed(0)
model = MagnitudeNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
