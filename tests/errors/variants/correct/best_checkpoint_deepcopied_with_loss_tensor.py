# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 4
# trigger: the training loop keeps its best checkpoint as copy.deepcopy of a dict holding the
#   loss tensor (still in its graph) next to the state_dict
# source: none found; the pattern as users write it
# results: losses, model, float(best["loss"])
import copy

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
best = {"loss": float("inf")}
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if loss < best["loss"]:
        best = copy.deepcopy({"loss": loss.detach(), "state": model.state_dict()})  # PRIMARY
