# message: Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.
# code: AD121 (catalogue: mark_dirty_not_returned)
# set: 4
# trigger: an in-place noise Function called from a module's forward marks the noise as dirty
#   instead of the tensor it writes
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class AddNoise_(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, noise):
        x.add_(noise)
        ctx.mark_dirty(x)  # PRIMARY
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class NoisyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(4, 6), nn.Linear(6, 1)

    def forward(self, x, noise):
        return self.out(torch.tanh(AddNoise_.apply(self.inp(x), noise)))


torch.manual_seed(0)
model = NoisyNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
noises = [0.1 * torch.randn(5, 6) for _ in range(2)]
losses = []
for noise in noises:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x, noise), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
