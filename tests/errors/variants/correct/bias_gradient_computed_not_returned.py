# message: function LinearFunctionBackward returned an incorrect number of gradients (expected 3, got 2)
# code: AD120 (catalogue: function_gradient_not_returned)
# set: 4
# trigger: a hand-written linear Function (the "Extending PyTorch" pattern) used inside a module;
#   backward computes the bias gradient but returns only the input's and the weight's
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output @ weight
        grad_weight = grad_output.T @ x
        grad_bias = grad_output.sum(dim=0)
        return grad_x, grad_weight, grad_bias  # PRIMARY


class MyLinear(nn.Module):
    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(outputs, inputs) * 0.5)
        self.bias = nn.Parameter(torch.zeros(outputs))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


torch.manual_seed(0)
model = nn.Sequential(MyLinear(4, 3), nn.Tanh(), MyLinear(3, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
