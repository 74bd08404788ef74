# message: Function ProjectBackward returned an invalid gradient at index 1 - got [2, 3] but expected
#   shape compatible with [3, 2]
# code: AD120 (catalogue: function_wrong_shape)
# set: 12
# trigger: a hand-written projection Function computes x @ w with w stored as (in, out), but its
#   backward writes the weight gradient in nn.Linear's (out, in) layout, grad.t() @ x
# source: none found; the pattern as users write it (weight layouts mixed up between nn.Linear and
#   a hand-written matmul)
# results: losses, model
import torch
from torch import nn


class Project(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w.t(), grad.t() @ x  # PRIMARY


class Projection(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 2) * 0.5)

    def forward(self, x):
        return Project.apply(x, self.w)


torch.manual_seed(0)
model = Projection()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
