"""Fitting the pose of an SMPL-style body model (a kinematic tree of joints) to target joint
positions by gradient descent. The forward kinematics compose each joint's local rigid transform
with its parent's global one, writing the result into the same tensor it reads the parents from:
`G[:, i] = torch.matmul(G[:, parent[i - 1]], G_[:, i])`. The matmul saves the parent's slice (a
view of G) for its backward, and the next joints' writes change G, so `loss.backward()` fails
("one of the variables needed for gradient computation has been modified by an inplace
operation"). Cloning G once before the loop, which the reporter tried, runs but reads the
parents' local transforms instead of their composed ones: other joint positions.
Source: https://github.com/nkolot/GraphCMR/issues/19 (the chain is built as a list of the
composed transforms and stacked, as in the SMPL/smplx reference code)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

N_JOINTS, BATCH = 8, 2
PARENTS = [0, 1, 2, 0, 4, 0, 6]  # parent of joints 1..7


def rodrigues(theta):
    angle = theta.norm(dim=-1, keepdim=True).clamp(min=1e-8)
    axis = theta / angle
    x, y, z = axis.unbind(-1)
    zeros = torch.zeros_like(x)
    skew = torch.stack([zeros, -z, y, z, zeros, -x, -y, x, zeros], dim=-1).view(*theta.shape[:-1], 3, 3)
    eye = torch.eye(3).expand_as(skew)
    sin, cos = torch.sin(angle).unsqueeze(-1), torch.cos(angle).unsqueeze(-1)
    return eye + sin * skew + (1 - cos) * skew @ skew


class SMPLKinematics(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("J_template", torch.randn(N_JOINTS, 3))
        self.parent = PARENTS

    def forward(self, pose):
        batch = pose.shape[0]
        R = rodrigues(pose.view(batch, N_JOINTS, 3))
        J = self.J_template.expand(batch, -1, -1)
        J_rel = J.clone()
        J_rel[:, 1:] = J[:, 1:] - J[:, self.parent]
        top = torch.cat([R, J_rel.unsqueeze(-1)], dim=-1)
        bottom = torch.tensor([0.0, 0.0, 0.0, 1.0]).expand(batch, N_JOINTS, 1, 4)
        G_ = torch.cat([top, bottom], dim=-2)
        chain = [G_[:, 0]]
        for i in range(1, N_JOINTS):
            chain.append(torch.matmul(chain[self.parent[i - 1]], G_[:, i, :, :]))
        G = torch.stack(chain, dim=1)
        return G[:, :, :3, 3]


smpl = SMPLKinematics()
target_joints = smpl(torch.randn(BATCH, N_JOINTS * 3) * 0.5).detach()
pose = nn.Parameter(torch.randn(BATCH, N_JOINTS * 3) * 0.1)
optimizer = torch.optim.Adam([pose], lr=0.05)

losses = []
for step in range(30):
    joints = smpl(pose)
    loss = ((joints - target_joints) ** 2).sum(-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "pose": pose.detach().clone()}
