# message: Some elements marked as dirty during the forward method were not returned as output.
#   The inputs that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 7
# trigger: a hard-tanh Function meant to work in place marks its input dirty, but its forward
#   computes x.clamp(-1, 1) (the function, not clamp_) and returns that new tensor
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class HardTanhInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.abs() <= 1)
        ctx.mark_dirty(x)
        return x.clamp_(-1, 1)  # PRIMARY

    @staticmethod
    def backward(ctx, grad_out):
        inside, = ctx.saved_tensors
        return grad_out * inside


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(HardTanhInPlace.apply(self.lin(x) * 2))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
