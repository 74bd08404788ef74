"""A robot-reaching objective written with a pose library's custom autograd functions: the
library's `PoseInverse` takes six inputs (the pose's position and quaternion, and four optional
buffers for the outputs and their adjoints, passed as None) and its `backward` returns a gradient
for the two tensors and None for only two of the four buffers. autograd wants one entry per
input of `forward`, so the first `loss.backward()` raises "function PoseInverseBackward returned
an incorrect number of gradients (expected 6, got 4)". In the library the forward and backward
run warp kernels; this CPU re-creation computes the same inverse pose and its adjoint with torch.
The change (the maintainers' fix): `backward` returns six entries, None for each buffer.
Source: https://github.com/NVlabs/curobo/issues/382
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def quaternion_conjugate(quaternion):
    return torch.cat([quaternion[:, :1], -quaternion[:, 1:]], dim=-1)


def rotate(quaternion, vector):
    w, xyz = quaternion[:, :1], quaternion[:, 1:]
    t = 2.0 * torch.cross(xyz, vector, dim=-1)
    return vector + w * t + torch.cross(xyz, t, dim=-1)


def inverse_pose(position, quaternion):
    inverse_quaternion = quaternion_conjugate(quaternion)
    return -rotate(inverse_quaternion, position), inverse_quaternion


class PoseInverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, position, quaternion, out_position, out_quaternion, adj_position, adj_quaternion):
        if out_position is None:
            out_position = torch.zeros_like(position)
        if out_quaternion is None:
            out_quaternion = torch.zeros_like(quaternion)
        ctx.save_for_backward(position, quaternion)
        inverse_position, inverse_quaternion = inverse_pose(position, quaternion)
        out_position.copy_(inverse_position)
        out_quaternion.copy_(inverse_quaternion)
        return out_position, out_quaternion

    @staticmethod
    def backward(ctx, grad_out_position, grad_out_quaternion):
        position, quaternion = ctx.saved_tensors
        with torch.enable_grad():
            position_ = position.detach().requires_grad_()
            quaternion_ = quaternion.detach().requires_grad_()
            inverse_position, inverse_quaternion = inverse_pose(position_, quaternion_)
            adj_position, adj_quaternion = torch.autograd.grad(
                (inverse_position, inverse_quaternion), (position_, quaternion_),
                (grad_out_position, grad_out_quaternion))
        g_p1 = g_q1 = None
        if ctx.needs_input_grad[0]:
            g_p1 = adj_position
        if ctx.needs_input_grad[1]:
            g_q1 = adj_quaternion
        return g_p1, g_q1, None, None


class PoseHead(nn.Module):
    """Predicts an end-effector pose (position, unit quaternion) from a joint configuration."""

    def __init__(self, n_joints=7):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_joints, 64), nn.Tanh(), nn.Linear(64, 7))

    def forward(self, joints):
        out = self.body(joints)
        return out[:, :3], nn.functional.normalize(out[:, 3:], dim=-1)


model = PoseHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
joints = torch.randn(16, 7)
goal_position = torch.randn(16, 3) * 0.3
goal_quaternion = nn.functional.normalize(torch.randn(16, 4), dim=-1)

losses = []
for step in range(20):
    position, quaternion = model(joints)
    # the goal expressed in the end-effector frame: inverse(ee) * goal
    inv_position, inv_quaternion = PoseInverse.apply(position, quaternion, None, None, None, None)
    relative_position = inv_position + rotate(inv_quaternion, goal_position)
    loss = relative_position.pow(2).sum(-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

with torch.no_grad():
    final_position, final_quaternion = model(joints)
result = {"losses": torch.tensor(losses), "position": final_position, "quaternion": final_quaternion}
