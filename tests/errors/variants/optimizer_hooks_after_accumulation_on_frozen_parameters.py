# message: cannot register a hook on a tensor that doesn't require gradient
# code: AD116 (catalogue: hook_no_grad)
# set: 12
# helpers: lib_fused.py
# trigger: an "optimizer in backward" helper in another file registers
#   register_post_accumulate_grad_hook on every parameter of the model, including the frozen
#   embedding's weight
# source: none found; the pattern as users write it (PyTorch's optimizer-in-backward recipe applied
#   to a partly frozen model)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_fused import step_in_backward  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(5, 3), nn.Flatten(), nn.Linear(6, 1))
model[0].weight.requires_grad_(False)
step_in_backward(model, lr=0.1)
tokens, y = torch.tensor([[0, 1], [2, 3], [4, 0]]), torch.randn(3, 1)
losses = []
for _ in range(2):
    loss = (model(tokens) - y).pow(2).mean()
    loss.backward()
    losses.append(loss.item())
