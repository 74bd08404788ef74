# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [2, 1, 2, 2] while the given forward gradient is of size [8].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 13
# trigger: a sensitivity helper computes a directional derivative of a convolutional model with
#   torch.autograd.forward_ad, the direction drawn as a flat vector of the batch's element count
#   (as for parameters_to_vector) and given to make_dual for an image batch [2, 1, 2, 2]
# source: none found; the pattern as users write it (flat direction vectors, forward-mode tutorial)
# results: out, directional
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


def directional_sensitivity(model, images, direction):
    with fwAD.dual_level():
        dual = fwAD.make_dual(images, direction.view_as(images))  # PRIMARY
        primal, tangent = fwAD.unpack_dual(model(dual))
    return primal, tangent


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 2, 2), nn.Tanh(), nn.Flatten())
images = torch.randn(2, 1, 2, 2)
direction = torch.randn(images.numel())
out, directional = directional_sensitivity(model, images, direction)
