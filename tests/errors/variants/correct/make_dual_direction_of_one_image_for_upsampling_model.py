# message: Trying to set a forward gradient that has a different size than that of the original
#   Tensor, this is not supported. Tensor is of size [2, 1, 4, 4] while the given forward gradient is
#   of size [1, 4, 4].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 15
# trigger: a decoder that upsamples with F.interpolate is probed along one image-shaped direction
#   (channels, height, width) drawn once, given to fwAD.make_dual for the whole batch
# source: none found; the pattern as users write it (a direction drawn the shape of one example)
# results: tangent
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F
from torch import nn


class Upsampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))


torch.manual_seed(0)
model = Upsampler()
images = torch.randn(2, 1, 4, 4)
direction = torch.randn(1, 4, 4)
with fwAD.dual_level():
    dual = fwAD.make_dual(images, direction.expand_as(images))  # PRIMARY
    tangent = fwAD.unpack_dual(model(dual)).tangent
