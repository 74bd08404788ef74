# message: attempting to assign a gradient of size '[4, 2, 3]' to a tensor of size '[2, 3]'. Please ensure that the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 9
# trigger: a differentially private step computes one gradient per example in a loop, clips each,
#   and assigns the stacked per-example gradients to .grad instead of their sum
# source: none found; the pattern as users write it (DP-SGD written by hand)
# results: model
import torch
from torch import nn
import torch.nn.functional as F


def private_step(model, optimizer, x, y, clip):
    per_example = []
    for xi, yi in zip(x, y):
        (g,) = torch.autograd.grad(F.mse_loss(model(xi), yi), model.weight)
        per_example.append(g * min(1.0, clip / (g.norm().item() + 1e-6)))
    model.weight.grad = torch.stack(per_example).sum(0)  # PRIMARY
    optimizer.step()


torch.manual_seed(0)
model = nn.Linear(3, 2, bias=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 2)
for _ in range(2):
    private_step(model, optimizer, x, y, clip=1.0)
