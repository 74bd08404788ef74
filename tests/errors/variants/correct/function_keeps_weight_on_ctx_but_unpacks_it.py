# message: not enough values to unpack (expected 2, got 1)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 8
# trigger: a custom matmul Function saves the input with save_for_backward and keeps the weight as
#   a ctx attribute; backward unpacks two tensors from ctx.saved_tensors
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x)
        ctx.weight = weight
        return x @ weight.t()

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors[0], ctx.weight  # PRIMARY
        return grad @ weight, grad.t() @ x


class HandLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.5)

    def forward(self, x):
        return LinearFunction.apply(x, self.weight)


torch.manual_seed(0)
model = nn.Sequential(HandLinear(3, 4), nn.Tanh(), HandLinear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
