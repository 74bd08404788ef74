"""A network learns inverse kinematics for a planar two-link arm: it maps a target end-effector
position to joint angles, and is trained by running the predicted angles through forward
kinematics and taking the L1 distance to the target. The forward kinematics come from a
robotics toolbox written in NumPy (`fkine`), so the predicted angles are handed over with
`.numpy()`; PyTorch raises "Can't call numpy() on Tensor that requires grad", and detaching
them instead would leave a loss with no path to the network.
Source: https://github.com/petercorke/robotics-toolbox-python/issues/390 ("incorporate FK into a
neural network and do back-propagation": the maintainer's answer is that `fkine()` is NumPy and
cannot be traced by autograd; implement the forward kinematics in PyTorch, a short chain of
rotations for a fixed robot).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

LINKS = (1.0, 0.7)


def fkine(joint_angles):
    """End-effector position of the arm for a batch of joint angles (NumPy, like the toolbox)."""
    q1, q2 = joint_angles[:, 0], joint_angles[:, 1]
    x = LINKS[0] * np.cos(q1) + LINKS[1] * np.cos(q1 + q2)
    y = LINKS[0] * np.sin(q1) + LINKS[1] * np.sin(q1 + q2)
    return np.stack([x, y], axis=1)


ik_net = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(ik_net.parameters(), lr=1e-2)
reachable = torch.rand(64, 2) * torch.tensor([0.5, 3.14])
targets = torch.from_numpy(fkine(reachable.numpy())).float()
losses = []
for step in range(5):
    joint_angles = ik_net(targets)
    reached = torch.from_numpy(fkine(joint_angles.numpy())).float()
    loss = (reached - targets).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in ik_net.parameters()]}
