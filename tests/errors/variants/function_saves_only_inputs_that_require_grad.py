# message: not enough values to unpack (expected 2, got 1)
# code: AD142 (catalogue: saved_tensors_unpack_count)
# set: 11
# trigger: a hand-written bilinear Function saves only the inputs that require grad
#   (ctx.save_for_backward(*[t for t in (x, w) if t.requires_grad]), to save memory); the data x does
#   not require grad, so one tensor is saved, and backward unpacks two
# source: none found; the pattern as users write it (saving memory in custom Functions)
# results: losses, model
import torch
from torch import nn


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(*[t for t in (x, w) if t.requires_grad])  # PRIMARY
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w, (grad * x).sum(dim=0)


class ScaledRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(Scale.apply(x, self.w))


torch.manual_seed(0)
model = ScaledRegression()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
