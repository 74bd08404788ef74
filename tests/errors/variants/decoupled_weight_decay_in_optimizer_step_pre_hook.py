# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 13
# trigger: decoupled weight decay is added to plain SGD as an optimizer step pre-hook
#   (register_step_pre_hook) that shrinks every parameter with p.mul_(); the hook runs before step()
#   turns gradients off, so the write into a leaf that requires grad is recorded
# source: none found; the pattern as users write it (optimizer hooks for weight decay)
# results: model, losses
import torch
from torch import nn


def decoupled_weight_decay(optimizer, args, kwargs):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.mul_(1 - group["lr"] * 0.01)  # PRIMARY


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.register_step_pre_hook(decoupled_weight_decay)
x, y = torch.randn(8, 3), torch.randn(8, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
