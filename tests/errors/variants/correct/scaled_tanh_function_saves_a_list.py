import torch
from torch import nn
import torch.nn.functional as F


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        needed = [x, scale]
        ctx.save_for_backward(*needed)  # PRIMARY
        return scale * torch.tanh(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        t = torch.tanh(x)
        return grad_output * scale * (1 - t * t), (grad_output * t).sum()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.tensor(1.5))

    def forward(self, x):
        return ScaledTanh.apply(self.fc(x), self.scale).sum(1, keepdim=True)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
