# message: optimizer got an empty parameter list
# code: AD129 (catalogue: optimizer_empty_parameters)
# set: 9
# trigger: fine-tuning freezes the whole model with requires_grad_(False), builds the optimizer over
#   the parameters that require grad, and only then unfreezes the head it meant to train
# source: none found; the pattern as users write it (linear probing of a frozen backbone)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
model.requires_grad_(False)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)  # PRIMARY
model[2].requires_grad_(True)
x, y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
