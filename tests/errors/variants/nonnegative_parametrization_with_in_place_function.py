# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 16
# trigger: a non-negative weight constraint registered with torch.nn.utils.parametrize; the
#   parametrization module calls a memory-saving Function that rectifies its input in place
#   (ctx.mark_dirty), and the input a parametrization receives is the parameter itself, a leaf
# source: none found; the pattern as users write it (an in-place Function reused inside a parametrization)
# results: model, losses
import torch
from torch import nn
from torch.nn.utils import parametrize


class RectifyInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        x.mul_(mask)
        ctx.mark_dirty(x)
        ctx.save_for_backward(mask)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        return grad_output * mask


class NonNegative(nn.Module):
    def forward(self, weight):
        return RectifyInPlace.apply(weight)  # PRIMARY


torch.manual_seed(0)
model = nn.Linear(4, 2)
parametrize.register_parametrization(model, "weight", NonNegative())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 2)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
