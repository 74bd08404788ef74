# message: attempting to assign a gradient of size '[4]' to a tensor of size '[4, 3]'. Please ensure that the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 8
# trigger: a federated client computes its gradients with torch.autograd.grad over its parameters
#   sorted by name (a fixed order shared with the server), then assigns them back zipped with
#   model.parameters(), whose order is another one
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    shared = [p for _, p in sorted(model.named_parameters())]
    loss = F.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, shared)
    for p, g in zip(shared, grads):  # PRIMARY
        p.grad = g
    optimizer.step()
    losses.append(loss.item())
