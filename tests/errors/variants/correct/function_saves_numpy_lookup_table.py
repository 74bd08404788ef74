# message: save_for_backward can only save variables, but argument 1 is of type numpy.ndarray
# code: AD122 (catalogue: save_for_backward_non_tensor)
# set: 11
# trigger: a piecewise-linear activation Function looks its slopes up in a NumPy table (the table is
#   built with NumPy in the module's __init__) and gives the looked-up slopes, a NumPy array, to
#   ctx.save_for_backward with the input
# source: none found; the pattern as users write it (lookup tables kept in NumPy inside custom
#   Functions)
# results: losses, model
import numpy as np
import torch
from torch import nn


class PiecewiseLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slopes_table):
        segment = np.clip(np.floor(x.detach().numpy()) + 2, 0, len(slopes_table) - 1).astype(np.int64)
        slopes = slopes_table[segment]
        ctx.save_for_backward(x, torch.from_numpy(slopes))  # PRIMARY
        return x * torch.from_numpy(slopes)

    @staticmethod
    def backward(ctx, grad):
        x, slopes = ctx.saved_tensors
        return grad * slopes, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)
        self.slopes_table = np.array([0.1, 0.5, 1.0, 1.5], dtype=np.float32)

    def forward(self, x):
        return self.head(PiecewiseLinear.apply(self.encoder(x), self.slopes_table))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
