# message: Output 0 of FlattenFeatures is a view and is being modified inplace. This view was
#   created inside a custom Function (or because an input was returned as-is) and the autograd logic
#   to handle view+inplace would override the custom backward associated with the custom Function,
#   leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the
#   output of the custom Function.
# code: AD107 (catalogue: custom_function_view_inplace)
# set: 12
# trigger: a hand-written flatten Function returns x.flatten(1) (a view of a contiguous input); the
#   module's forward adds a learned offset to the result with add_()
# source: none found; the pattern as users write it (shape-changing Functions that return views)
# results: losses, model
import torch
from torch import nn


class FlattenFeatures(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.flatten(1)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 1)
        self.offset = nn.Parameter(torch.zeros(6))
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        flat = FlattenFeatures.apply(self.conv(x))
        flat = flat.add(self.offset)  # PRIMARY
        return self.head(flat)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 2, 3), torch.randn(4, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
