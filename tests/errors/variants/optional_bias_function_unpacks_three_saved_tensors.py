# message: not enough values to unpack (expected 3, got 2)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 14
# trigger: a custom linear Function with an optional bias saves the bias only when it is given
#   (save_for_backward(x, weight) otherwise) and its backward always unpacks three saved tensors; a
#   layer built with bias=False calls it
# source: none found; the pattern as users write it (optional-bias custom layers)
# results: layer, losses
import torch
from torch import nn


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        if bias is None:
            ctx.save_for_backward(x, weight)
        else:
            ctx.save_for_backward(x, weight, bias)
        out = x @ weight.T
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias = ctx.saved_tensors  # PRIMARY
        grad_bias = None if bias is None else grad.sum(0)
        return grad @ weight, grad.T @ x, grad_bias


class MyLinear(nn.Module):
    def __init__(self, n_in, n_out, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * 0.3)
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


torch.manual_seed(0)
layer = MyLinear(3, 2, bias=False)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (layer(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
