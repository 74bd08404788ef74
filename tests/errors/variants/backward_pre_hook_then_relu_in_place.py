# message: Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was created
#   inside a custom Function (or because an input was returned as-is) and the autograd logic to
#   handle view+inplace would override the custom backward associated with the custom Function,
#   leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the
#   output of the custom Function.
# code: AD107 (catalogue: full_backward_hook_inplace)
# set: 11
# helpers: lib_grad_budget.py
# trigger: a gradient budget in another file registers a full backward *pre* hook
#   (register_full_backward_pre_hook) on the encoder to rescale the gradient reaching its output;
#   the model's forward then applies torch.relu_ (the in-place function) to the encoder's output
# source: none found; the pattern as users write it (backward pre hooks wrap the module's outputs in
#   BackwardHookFunction like full backward hooks do)
# results: budget.norms, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_grad_budget import GradientBudget  # noqa: E402


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 5)
        self.head = nn.Linear(5, 1)

    def forward(self, x):
        h = torch.relu_(self.encoder(x))  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = Regressor()
budget = GradientBudget(max_norm=0.05)
budget.attach(model.encoder)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    optimizer.zero_grad()
    (model(x) - y).pow(2).mean().backward()
    optimizer.step()
