# message: If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 4
# trigger: a module's forward gives a slice of its features (feats[:, :4]) to an in-place
#   clamping Function that also returns how many entries it clamped
# source: none found; the pattern as users write it
# results: losses, model, counts
import torch
from torch import nn
import torch.nn.functional as F


class ClampAndCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        negative = x < 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(negative)
        ctx.mark_non_differentiable(negative)
        return x, negative.sum()

    @staticmethod
    def backward(ctx, grad_x, grad_count):
        negative, = ctx.saved_tensors
        return grad_x.masked_fill(negative, 0.0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.head = nn.Linear(3, 6), nn.Linear(4, 1)

    def forward(self, x):
        feats = self.lin(x)
        left = feats[:, :4].clone()  # PRIMARY
        clamped, count = ClampAndCount.apply(left)
        return self.head(clamped), count


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses, counts = [], []
for _ in range(2):
    optimizer.zero_grad()
    out, count = model(x)
    loss = F.mse_loss(out, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    counts.append(int(count))
