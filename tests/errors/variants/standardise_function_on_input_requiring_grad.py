# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 5
# trigger: a saliency map: the input image is made with requires_grad=True and given to an
#   in-place standardisation Function (ctx.mark_dirty) from another file (lib_transforms.py) before
#   the model
# source: none found; the pattern as users write it
# helpers: lib_transforms.py
# results: image_grad
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_transforms import StandardiseInPlace  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 1))
image = (torch.rand(6) * 5).requires_grad_(True)
score = model(StandardiseInPlace.apply(image)).sum()  # PRIMARY
score.backward()
image_grad = image.grad
