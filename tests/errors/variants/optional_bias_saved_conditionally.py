# message: not enough values to unpack (expected 3, got 2)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 7
# trigger: a hand-written linear Function saves the bias only when there is one
#   (save_for_backward(x, w, b) or (x, w)); backward always unpacks three, and the model is
#   built with bias=False
# source: none found; the pattern as users write it (the "Extending PyTorch" LinearFunction
#   with an optional bias)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        if bias is not None:
            ctx.save_for_backward(x, weight, bias)
        else:
            ctx.save_for_backward(x, weight)
        out = x @ weight.T
        return out + bias if bias is not None else out

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, bias = ctx.saved_tensors  # PRIMARY
        grad_bias = grad_out.sum(0) if bias is not None else None
        return grad_out @ weight, grad_out.T @ x, grad_bias


class Projection(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3) * 0.5)
        self.bias = nn.Parameter(torch.zeros(2)) if bias else None

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


torch.manual_seed(0)
model = Projection(bias=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
