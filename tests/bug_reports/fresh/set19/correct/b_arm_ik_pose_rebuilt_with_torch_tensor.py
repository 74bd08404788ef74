"""Inverse kinematics of a planar three-link arm whose error function keeps the forward-kinematics
pose in the graph (a dtype conversion with `.to`, not a copy with `torch.tensor`), so gradient
descent on the joint angles reaches the target.
Source: https://github.com/facebookresearch/theseus/issues/674."""
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
    current_pose = forward_kinematics(theta).to(torch.float32)
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
