# message: Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.
# code: AD107 (catalogue: full_backward_hook_inplace)
# set: 8
# helpers: lib_gradlog.py
# trigger: a gradient logger in another file registers a full backward hook on the encoder; the
#   model's forward masks the encoder's output in place (h.mul_(mask)) before the head
# source: none found; the pattern as users write it (register_full_backward_hook wraps the
#   module's outputs in BackwardHookFunction, whose outputs must not be written in place)
# results: logger.norms, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_gradlog import GradientLogger  # noqa: E402


class MaskedModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 6)
        self.head = nn.Linear(6, 2)

    def forward(self, x, mask):
        h = self.encoder(x)
        h = h.mul(mask)  # PRIMARY
        return self.head(h)


torch.manual_seed(0)
model = MaskedModel()
logger = GradientLogger()
logger.attach(model.encoder)
x, mask = torch.randn(3, 4), (torch.rand(3, 6) > 0.3).float()
model(x, mask).pow(2).sum().backward()
