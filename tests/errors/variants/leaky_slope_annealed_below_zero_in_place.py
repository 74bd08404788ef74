# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not
#   supported. This is caused by calling in-place forward function with a negative slope, please call
#   out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do require
#   supporting in-place leakRelu backward calculation with negative slope
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 17
# trigger: an activation-shape experiment anneals the slope of an in-place F.leaky_relu_ over the
#   epochs (0.2, 0.05, then -0.1, a "concave" activation) from a schedule attribute of the module;
#   the first epoch with a negative slope fails in backward()
# source: none found; the pattern as users write it (an annealed hyperparameter crossing zero)
# results: losses, model
import torch
from torch import nn
from torch.nn import functional as F


class AnnealedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 1)
        self.slope = 0.2

    def forward(self, x):
        h = self.fc1(x)
        F.leaky_relu_(h, self.slope)  # PRIMARY
        return self.fc2(h)


torch.manual_seed(0)
model = AnnealedMLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for epoch in range(4):
    model.slope = 0.2 - 0.15 * epoch if epoch < 2 else -0.1
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
