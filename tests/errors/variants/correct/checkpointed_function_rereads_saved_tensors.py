# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already
#   unpacked once.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 3
# trigger: a custom linear Function's backward computes the weight's gradient in a helper
#   method that reads ctx.saved_tensors again; the layer runs inside checkpoint(use_reentrant=False)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return grad @ weight, LinearFunction.weight_grad(x, grad)

    @staticmethod
    def weight_grad(x, grad):  # PRIMARY: the saved input is passed in, not read again
        return grad.T @ x


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3) * 0.5)

    def forward(self, x):
        return torch.tanh(LinearFunction.apply(x, self.weight))


torch.manual_seed(0)
model = Layer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3, requires_grad=True), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(checkpoint(model, x, use_reentrant=False), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
