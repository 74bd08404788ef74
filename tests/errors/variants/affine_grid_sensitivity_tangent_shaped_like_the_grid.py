# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [1, 2, 3] while the given forward gradient is of size
#   [1, 3, 3, 2].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 23
# trigger: a spatial transformer's sampling grid (F.affine_grid of the predicted affine matrix theta) is
#   probed for its sensitivity to theta with torch.func.jvp inside a class method; the perturbation is
#   drawn with the shape of the grid (the output) instead of theta's (the input)
# source: none found; the pattern as users write it
# results: grid, sensitivity
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SpatialTransformer:
    def __init__(self, size):
        self.size = size

    def grid(self, theta):
        return F.affine_grid(theta, self.size, align_corners=False)

    def grid_sensitivity(self, theta, generator):
        out_shape = (self.size[0], self.size[2], self.size[3], 2)
        perturbation = 0.01 * torch.randn(out_shape, generator=generator)  # PRIMARY
        return torch.func.jvp(self.grid, (theta,), (perturbation,))


theta = torch.tensor([[[0.9, 0.1, 0.0], [-0.1, 0.9, 0.05]]])
transformer = SpatialTransformer((1, 2, 3, 3))
grid, sensitivity = transformer.grid_sensitivity(theta, torch.Generator().manual_seed(5))
