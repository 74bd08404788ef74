# message: Some elements marked as dirty during the forward method were not returned as output. The inputs
#   that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 10
# trigger: a memory-saving standardisation Function centres its input in place (x.sub_) and marks
#   it dirty, but its last step divides out of place (return x.div(std)), so the tensor returned is
#   not the dirty input; a module's forward applies it to a hidden layer
# source: none found; the pattern as users write it (in-place normalisation Functions)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class StandardiseInPlace(torch.autograd.Function):
    """Standardises the last dimension in place; the statistics are treated as constants."""

    @staticmethod
    def forward(ctx, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True) + 1e-5
        x.sub_(mean)
        ctx.mark_dirty(x)
        ctx.save_for_backward(std)
        return x.div_(std)  # PRIMARY

    @staticmethod
    def backward(ctx, grad):
        (std,) = ctx.saved_tensors
        return grad / std


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(StandardiseInPlace.apply(self.hidden(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
