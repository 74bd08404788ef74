# message: Some elements marked as dirty during the forward method were not returned as output. The inputs
#   that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 11
# trigger: an in-place hard-tanh Function clamps its input with clamp_ and marks it dirty, then
#   returns x.view_as(x) (the habit from gradient-reversal Functions), a new view rather than the
#   dirty input itself; a module's forward applies it to a hidden layer
# source: none found; the pattern as users write it (view_as copied from gradient reversal layers)
# results: losses, model
import torch
from torch import nn


class HardTanhInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.abs() < 1)
        x.clamp_(-1, 1)
        ctx.mark_dirty(x)
        return x.view_as(x)  # PRIMARY

    @staticmethod
    def backward(ctx, grad):
        (inside,) = ctx.saved_tensors
        return grad * inside


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(HardTanhInPlace.apply(self.encoder(x) * 2))


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
