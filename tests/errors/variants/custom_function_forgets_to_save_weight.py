# message: not enough values to unpack (expected 2, got 1)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 3
# trigger: a custom Function saves only its input with save_for_backward and keeps the weight
#   as a ctx attribute for a log; backward unpacks (input, weight) from ctx.saved_tensors
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x)  # PRIMARY
        ctx.weight_norm = weight.norm().item()
        return torch.tanh(x * weight)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        local = grad * (1 - torch.tanh(x * weight) ** 2)
        return local * weight, (local * x).sum(dim=0)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return ScaledTanh.apply(x, self.weight)


torch.manual_seed(0)
model = Layer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
