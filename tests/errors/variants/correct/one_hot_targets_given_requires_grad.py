# message: only Tensors of floating point dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer)
# set: 12
# trigger: a label-refinement step learns soft targets starting from the one-hot labels; the start is
#   F.one_hot(labels, classes).requires_grad_() (one_hot returns int64)
# source: none found; the pattern as users write it (learned soft labels from one_hot)
# results: soft_targets, losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 2)
x, labels = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
soft_targets = F.one_hot(labels, 2).float().requires_grad_()  # PRIMARY
optimizer = torch.optim.SGD(list(model.parameters()) + [soft_targets], lr=0.1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = -(soft_targets.softmax(dim=1) * model(x).log_softmax(dim=1)).sum(dim=1).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
