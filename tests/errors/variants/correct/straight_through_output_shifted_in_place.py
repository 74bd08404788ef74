# message: Output 0 of StraightThrough is a view and is being modified inplace. This view
#   was created inside a custom Function (or because an input was returned as-is) and the autograd
#   logic to handle view+inplace would override the custom backward associated with the custom
#   Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by
#   cloning the output of the custom Function.
# code: AD107 (catalogue: custom_function_view_inplace)
# set: 5
# trigger: a quantisation-aware layer: a straight-through Function returns its input as-is when
#   the input is already on the grid (x.view_as(x)), and the module's forward adds its learned
#   offset with += on the Function's output
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class StraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class OffsetQuant(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.offset = nn.Parameter(torch.full((4,), 0.25))

    def forward(self, x):
        h = StraightThrough.apply(self.lin(x))
        h = h + self.offset  # PRIMARY
        return h


torch.manual_seed(0)
model = OffsetQuant()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
