# message: Output 0 of ClipGradient is a view and is being modified inplace. This view was created inside a
#   custom Function (or because an input was returned as-is) and the autograd logic to handle
#   view+inplace would override the custom backward associated with the custom Function, leading to
#   incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the
#   custom Function.
# code: AD107 (catalogue: custom_function_view_inplace)
# set: 10
# trigger: a gradient-clipping identity Function returns its input as it is (return x, no view_as);
#   the model's forward applies F.silu(..., inplace=True) to the Function's output
# source: none found; the pattern as users write it (identity Functions that only change the backward)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ClipGradient(torch.autograd.Function):
    """The identity forward; the gradient flowing back into the encoder is clamped."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-0.05, 0.05)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = ClipGradient.apply(self.encoder(x)).clone()  # PRIMARY
        return self.head(F.silu(h, inplace=True))


torch.manual_seed(0)
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
