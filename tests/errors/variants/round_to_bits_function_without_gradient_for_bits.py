# message: function RoundToBitsBackward returned an incorrect number of gradients (expected 2, got 1)
# code: AD120 (catalogue: function_wrong_count)
# set: 8
# trigger: a straight-through rounding Function takes the tensor and the number of bits (an int from
#   the module's config) and its backward returns only the gradient for the tensor; applied to a
#   quantised linear layer's weight inside the module's forward
# source: none found; the pattern as users write it (straight-through estimators for quantisation)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class RoundToBits(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bits):
        scale = 2 ** bits - 1
        return torch.round(x * scale) / scale

    @staticmethod
    def backward(ctx, grad):
        return grad  # PRIMARY


class QuantLinear(nn.Linear):
    def __init__(self, in_features, out_features, bits):
        super().__init__(in_features, out_features)
        self.bits = bits

    def forward(self, x):
        weight = RoundToBits.apply(torch.tanh(self.weight), self.bits)
        return F.linear(x, weight, self.bias)


torch.manual_seed(0)
model = nn.Sequential(QuantLinear(3, 4, bits=3), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
