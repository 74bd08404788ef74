# message: Output 0 of the user-provided function does not require gradients. The outputs must be
#   computed in a differentiable manner from the input when running in strict mode.
# code: AD235 (catalogue: jacobian_strict_output_rebuilt_with_torch_tensor)
# set: 15
# trigger: a robot arm's forward kinematics builds the end effector's position with the legacy
#   constructor torch.FloatTensor([x, y]) of computed values; its Jacobian is taken with
#   torch.autograd.functional.jacobian(..., strict=True)
# source: none found; the pattern as users write it (old tutorials' torch.FloatTensor)
# results: jac
import torch
from torch.autograd.functional import jacobian

lengths = torch.tensor([1.0, 0.7])


def end_effector(angles):
    x = lengths[0] * torch.cos(angles[0]) + lengths[1] * torch.cos(angles[0] + angles[1])
    y = lengths[0] * torch.sin(angles[0]) + lengths[1] * torch.sin(angles[0] + angles[1])
    return torch.stack([x, y])  # PRIMARY


angles = torch.tensor([0.3, 0.9])
jac = jacobian(end_effector, angles, strict=True)
