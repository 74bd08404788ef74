# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 16
# trigger: a camera model projects a 3-d point to pixel coordinates and returns them with
#   torch.stack([u, v]) of computed values (a copy without their graph); bundle adjustment takes
#   its Jacobian with torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it (as_tensor taken for a no-copy stack)
# results: J, pixel
import torch
from torch.autograd.functional import jacobian


class PinholeCamera:
    def __init__(self, focal, centre):
        self.focal = focal
        self.centre = centre

    def project(self, point):
        u = self.focal * point[0] / point[2] + self.centre[0]
        v = self.focal * point[1] / point[2] + self.centre[1]
        return torch.stack([u, v])  # PRIMARY


camera = PinholeCamera(500.0, (320.0, 240.0))
point = torch.tensor([0.2, -0.1, 2.0])
J = jacobian(camera.project, point, strict=True)
pixel = camera.project(point)
