# message: Some elements marked as dirty during the forward method were not returned as output.
# code: AD121 (catalogue: mark_dirty_not_returned)
# trigger: an in-place clamp Function marks its input dirty but returns x.clone(); it is
#   applied to a hidden layer's output inside a module
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class ClampInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, low):
        ctx.save_for_backward(x >= low)
        x.clamp_(min=low)
        ctx.mark_dirty(x)
        return x  # PRIMARY

    @staticmethod
    def backward(ctx, grad):
        (kept,) = ctx.saved_tensors
        return grad * kept, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(ClampInPlace.apply(self.hidden(x), 0.0))


torch.manual_seed(0)
model = Net()
loss = model(torch.randn(5, 3)).pow(2).mean()
loss.backward()
