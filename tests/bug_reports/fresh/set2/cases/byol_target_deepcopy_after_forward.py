"""BYOL: the target encoder is made lazily with `copy.deepcopy(online_encoder)` after a forward
pass, when a forward hook has stored the projection (a graph tensor) on the online encoder.
Source: https://github.com/lucidrains/byol-pytorch/issues/95 (deepcopy: "Only Tensors created
explicitly by the user ... support the deepcopy protocol"; fix: make the copy before the forward).
expect: raises"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
online = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 3))


def keep_projection(module, inputs, output):
    module.projection = output


online.register_forward_hook(keep_projection)
predictor = nn.Linear(3, 3)
view1, view2 = torch.randn(5, 4), torch.randn(5, 4)

online_proj = predictor(online(view1))
target_encoder = copy.deepcopy(online)
for p in target_encoder.parameters():
    p.requires_grad_(False)
with torch.no_grad():
    target_proj = target_encoder(view2)
loss = 2 - 2 * F.cosine_similarity(online_proj, target_proj, dim=-1).mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in (*online.parameters(), *predictor.parameters())]}
