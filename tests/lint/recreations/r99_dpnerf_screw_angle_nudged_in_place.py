"""DP-NeRF: the rigid blurring kernel warps sample points with a screw
motion whose angle is the norm of the predicted rotation,
`theta = torch.linalg.norm(rot, axis=-1)`, then nudged away from zero in
place (`theta += 1.0e-10`).  `linalg.norm` keeps its result for backward, so
`loss.backward()` in the training loop fails ("output 0 of
LinalgVectorNormBackward0, is at version 1; expected version 0"); the
reported fix is `theta = theta + 1.0e-10`.
Source: https://github.com/dogyoonlee/DP-NeRF/issues/2"""
import torch
import torch.nn as nn


class RigidBody():
    def __init__(self):
        super(RigidBody, self).__init__()

    def skew(self, w):
        w_new = torch.zeros_like(w).unsqueeze(1).repeat(1, 3, 1)
        w_re = torch.reshape(w_new, (w.shape[0], 9))
        w_re[..., 1] = -w[..., 2]
        w_re[..., 2] = w[..., 1]
        w_re[..., 3] = w[..., 2]
        w_re[..., 5] = -w[..., 0]
        w_re[..., 6] = -w[..., 1]
        w_re[..., 7] = w[..., 0]
        return w_re.reshape((w.shape[0], 3, 3))

    def exp_so3(self, w, theta):
        W = self.skew(w)
        theta = theta[..., None, None]
        return torch.eye(3)[None, ...] + torch.sin(theta) * W + (1.0 - torch.cos(theta)) * torch.matmul(W, W)

    def exp_se3(self, S, theta):
        w, v = torch.split(S, [3, 3], dim=-1)
        W = self.skew(w)
        R = self.exp_so3(w, theta)
        theta = theta[..., None, None]
        p = torch.matmul(theta * torch.eye(3)[None, ...] + (1.0 - torch.cos(theta)) * W
                         + (theta - torch.sin(theta)) * torch.matmul(W, W), v[..., None])
        RT_mat = torch.cat([R, p], -1)
        filling_mat = torch.tensor([0.0, 0.0, 0.0, 1.0])[None, None, ...].repeat(RT_mat.shape[0], 1, 1)
        return torch.cat([RT_mat, filling_mat], dim=-2)

    def to_homogenous(self, v):
        return torch.cat([v, torch.ones_like(v[..., :1])], axis=-1)

    def from_homogenous(self, v):
        return v[..., :3] / v[..., -1:]


class SE3Field():
    def __init__(self):
        super(SE3Field, self).__init__()
        self.rigid_body = RigidBody()

    def warp(self, pts, rot, trans):
        theta = torch.linalg.norm(rot, axis=-1)
        theta += 1.0e-10  # expect: ADL001
        rot = rot / theta.unsqueeze(-1)
        trans = trans / theta.unsqueeze(-1)
        screw_axis = torch.cat([rot, trans], axis=-1)
        transform = self.rigid_body.exp_se3(screw_axis, theta)
        warped_pts = torch.matmul(transform, self.rigid_body.to_homogenous(pts)[..., None]).squeeze(-1)
        return self.rigid_body.from_homogenous(warped_pts)


class RigidBlurringKernel(nn.Module):
    def __init__(self, num_img=4, embed_dim=8):
        super().__init__()
        self.img_embed = nn.Embedding(num_img, embed_dim)
        self.rot_head = nn.Linear(embed_dim, 3)
        self.trans_head = nn.Linear(embed_dim, 3)
        self.se3 = SE3Field()
        self.radiance = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, pts, img_idx):
        embed = self.img_embed(img_idx)
        rot = self.rot_head(embed) * 0.1
        trans = self.trans_head(embed) * 0.1
        warped = self.se3.warp(pts, rot, trans)
        return torch.sigmoid(self.radiance(warped))


def train(model, batches, lrate=5e-4):
    optimizer = torch.optim.Adam(model.parameters(), lr=lrate)
    for pts, img_idx, target_rgb in batches:
        rgb = model(pts, img_idx)
        loss = ((rgb - target_rgb) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    batches = [(torch.randn(6, 3), torch.randint(0, 4, (6,)), torch.rand(6, 3)) for _ in range(2)]
    train(RigidBlurringKernel(), batches)
