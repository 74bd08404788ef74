"""The forward kinematics written with torch operations (the maintainer's advice), so the loss
reaches the network through the predicted joint angles.
Source: https://github.com/petercorke/robotics-toolbox-python/issues/390."""
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


def fkine_torch(joint_angles):
    q1, q2 = joint_angles[:, 0], joint_angles[:, 1]
    x = LINKS[0] * torch.cos(q1) + LINKS[1] * torch.cos(q1 + q2)
    y = LINKS[0] * torch.sin(q1) + LINKS[1] * torch.sin(q1 + q2)
    return torch.stack([x, y], dim=1)


ik_net = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
optimizer = torch.optim.Adam(ik_net.parameters(), lr=1e-2)
reachable = torch.rand(64, 2) * torch.tensor([0.5, 3.14])
targets = torch.from_numpy(fkine(reachable.numpy())).float()
losses = []
for step in range(5):
    joint_angles = ik_net(targets)
    reached = fkine_torch(joint_angles)
    loss = (reached - targets).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in ik_net.parameters()]}
