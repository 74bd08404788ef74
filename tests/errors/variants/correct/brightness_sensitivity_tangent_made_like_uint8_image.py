# message: Expected tangent to be floating point or complex, but got: torch.uint8
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 25
# trigger: the derivative of a classifier's logits as every pixel brightens at the same rate, with
#   torch.func.jvp at the float input x = raw.float() / 255; the direction is made with
#   torch.ones_like(raw) of the uint8 image
# source: none found; the pattern as users write it (uint8 images from a decoder, converted for the model)
# results: logits, response
import os
import sys

import torch
from torch import nn
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def to_input(raw):
    """uint8 pixels in [0, 255] to the float input the network was trained on."""
    return raw.float() / 255.0


torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
raw = torch.randint(0, 256, (2, 1, 6, 6), dtype=torch.uint8)
x = to_input(raw)
# the derivative of the logits as every pixel gets brighter at the same rate
brighter = torch.ones_like(x)
logits, response = jvp(net, (x,), (brighter,))
