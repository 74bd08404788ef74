# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().
# code: AD139 (catalogue: detach_saved_inplace)
# set: 3
# trigger: truncated backpropagation through time: the recurrent state is cut every few steps
#   with h.detach_(), after the step's output layer (which saved h) used it
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(2, 3)
        self.out = nn.Linear(3, 1)


def sequence_loss(model, xs, ys, every):
    h = torch.zeros(1, 3)
    loss = 0.0
    for t in range(xs.size(0)):
        h = model.cell(xs[t], h)
        loss = loss + F.mse_loss(model.out(h), ys[t])
        if (t + 1) % every == 0:
            h.detach_()  # PRIMARY
    return loss


torch.manual_seed(0)
model = Recurrent()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
xs, ys = torch.randn(6, 1, 2), torch.randn(6, 1, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = sequence_loss(model, xs, ys, every=3)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
