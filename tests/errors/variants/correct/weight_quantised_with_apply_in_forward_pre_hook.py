# message: Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.
# code: AD134 (catalogue: apply_requires_grad)
# set: 15
# trigger: a forward pre-hook registered on a layer rounds the layer's weight to a grid of 1/4 with
#   Tensor.apply_ and Python's round before every forward (a post-training quantisation experiment
#   that keeps training)
# source: none found; the pattern as users write it
# results: model, losses
import torch
from torch import nn


def quantise_weight(module, inputs):
    module.weight.detach().apply_(lambda w: round(w * 4) / 4)  # PRIMARY


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model[0].register_forward_pre_hook(quantise_weight)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(2):
    x = torch.randn(5, 3)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
