# message: function LinearFunctionBackward returned an incorrect number of gradients (expected 3, got 2)
# code: AD120 (catalogue: function_wrong_count)
# trigger: a custom linear Function takes (input, weight, training); backward returns gradients
#   for the two tensors only; it is applied inside a module's forward
# source: none found; the pattern as users write it
# results: loss, layer, x.grad
import torch
from torch import nn


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, training):
        ctx.save_for_backward(x, weight)
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output @ weight
        grad_weight = grad_output.T @ x
        return grad_x, grad_weight, None  # PRIMARY


class MyLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.training)


torch.manual_seed(0)
layer = MyLinear()
x = torch.randn(4, 3, requires_grad=True)
loss = layer(x).pow(2).sum()
loss.backward()
