# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the
#   moment.  If you were attempting to deepcopy a module, this may be because of a
#   torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001
# code: AD303 (catalogue: deepcopy_weight_norm)
# set: 10
# trigger: after training, the first layer is pruned with torch.nn.utils.prune.l1_unstructured,
#   which keeps the pruned weight (weight_orig * mask, with grad history) as a plain attribute; the
#   pruned model is then kept with copy.deepcopy as a snapshot
# source: none found; the pattern as users write it (magnitude pruning, then a copy of the pruned model)
# results: losses, snapshot[0].weight, snapshot[2].weight
import copy

import torch
from torch import nn
import torch.nn.functional as F
from torch.nn.utils import prune

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
prune.l1_unstructured(model[0], "weight", amount=0.5)
snapshot = copy.deepcopy(model)  # PRIMARY
