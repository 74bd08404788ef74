# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 3
# trigger: a custom Function that clamps in place (ctx.mark_dirty) keeps a layer's weights
#   non-negative; the layer's forward applies it to its own nn.Parameter
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ClampNonNegative(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        kept = x > 0
        x.clamp_(min=0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(kept)
        return x

    @staticmethod
    def backward(ctx, grad):
        (kept,) = ctx.saved_tensors
        return grad * kept


class NonNegativeLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, 4))

    def forward(self, x):
        weight = ClampNonNegative.apply(self.weight.clone())  # PRIMARY
        return x @ weight.T


torch.manual_seed(0)
model = NonNegativeLinear()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
