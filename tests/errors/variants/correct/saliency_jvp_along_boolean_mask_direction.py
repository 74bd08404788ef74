# message: Expected tangent to be floating point or complex, but got: torch.bool
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 17
# trigger: a saliency check moves only the active (positive) input features: the direction given to
#   torch.func.jvp is the comparison mask x > 0 itself, a bool tensor, inside an explainer class's method
# source: none found; the pattern as users write it (a mask used as a 0/1 direction)
# results: scores, moved
import torch
from torch import nn
from torch.func import jvp


class Explainer:
    def __init__(self, model):
        self.model = model

    def active_feature_effect(self, x):
        direction = x > 0
        return jvp(self.model, (x,), (direction.to(x.dtype),))  # PRIMARY


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 1))
x = torch.randn(5, 4)
scores, moved = Explainer(model).active_feature_effect(x)
