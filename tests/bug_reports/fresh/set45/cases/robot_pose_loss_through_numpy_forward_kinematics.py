"""An inverse-kinematics network for a planar two-link arm: the model returns joint angles for a
target end-effector position, and the loss compares the position those angles reach with the
target. The reach is computed by a forward-kinematics solver outside PyTorch (numpy here, the
user's was a robotics library), fed with the angles as an array and wrapped back into a tensor:
the chain from the loss to the network is cut there, and `loss.backward()` fails with "element 0
of tensors does not require grad and does not have a grad_fn". The thread's way out (the user's
own plan, and the answer's): write the forward kinematics with torch operations, so autograd can
differentiate through it.
Source: https://discuss.pytorch.org/t/forward-kinematics-using-pytorch/93017
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

LINK_LENGTHS = (0.6, 0.4)


def forward_kinematics(joint_angles):
    """End-effector (x, y) of the arm for each row of joint angles (a stand-in for the solver)."""
    q = np.asarray(joint_angles)
    l1, l2 = LINK_LENGTHS
    x = l1 * np.cos(q[:, 0]) + l2 * np.cos(q[:, 0] + q[:, 1])
    y = l1 * np.sin(q[:, 0]) + l2 * np.sin(q[:, 0] + q[:, 1])
    return np.stack([x, y], axis=1)


class IKNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))

    def forward(self, target_poses):
        return self.layers(target_poses)


model = IKNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
angles = torch.rand(64, 2) * 1.5
dataset = torch.tensor(forward_kinematics(angles.numpy()), dtype=torch.float32)

losses = []
for epoch in range(30):
    optimizer.zero_grad()
    joint_solutions = model(dataset)
    poses = forward_kinematics(joint_solutions.detach().numpy())
    poses_from_generated_solutions = torch.tensor(poses, dtype=torch.float32)
    loss = ((poses_from_generated_solutions - dataset) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in model.parameters()]}
