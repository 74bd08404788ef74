# message: not enough values to unpack (expected 3, got 2)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 5
# trigger: a hand-written linear Function saves (input, weight) and its backward unpacks
#   (input, weight, bias) from ctx.saved_tensors, though the bias gradient needs no saved bias
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias):
        ctx.save_for_backward(input, weight)
        return input @ weight.t() + bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors  # PRIMARY
        return grad_output @ weight, grad_output.t() @ input, grad_output.sum(0)


class HandLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3) * 0.5)
        self.bias = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


torch.manual_seed(0)
model = HandLinear()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
