"""Inverse kinematics of a planar three-link arm solved by gradient descent on the joint angles:
forward kinematics (a chain of 2-D homogeneous transforms) gives the end-effector pose, and the
error to the target pose is minimised. The error function casts the forward-kinematics result with
`torch.tensor(current_pose, dtype=torch.float32)`, which copies the values into a new leaf without
history, so the error has no path back to the joint angles and `loss.backward()` raises "element
0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/facebookresearch/theseus/issues/674 ("Differentiable Inverse
Kinematics not able to converge to the correct solution": the error function rebuilds the
forward-kinematics pose with `torch.tensor(current_pose, dtype=torch.float32)` before comparing
it with the target, and the optimisation makes no progress).
expect: raises"""
import torch

torch.manual_seed(0)

LINKS = torch.tensor([1.0, 0.8, 0.5])


def transform(angle, length):
    c, s = torch.cos(angle), torch.sin(angle)
    zero, one = torch.zeros(()), torch.ones(())
    return torch.stack([torch.stack([c, -s, length * c]), torch.stack([s, c, length * s]), torch.stack([zero, zero, one])])


def forward_kinematics(theta):
    pose = torch.eye(3)
    for angle, length in zip(theta, LINKS):
        pose = pose @ transform(angle, length)
    return pose


def pose_error(theta, target):
    current_pose = torch.tensor(forward_kinematics(theta), dtype=torch.float32)
    position_error = current_pose[:2, 2] - target[:2, 2]
    heading_error = torch.atan2(current_pose[1, 0], current_pose[0, 0]) - torch.atan2(target[1, 0], target[0, 0])
    return (position_error**2).sum() + 0.1 * heading_error**2


target = forward_kinematics(torch.tensor([0.4, -0.3, 0.8]))
theta = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([theta], lr=0.1)
errors = []
for step in range(40):
    loss = pose_error(theta, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    errors.append(loss.detach())

result = {"errors": torch.stack(errors), "theta": theta.detach().clone()}
