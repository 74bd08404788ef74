"""A pose network predicts a 2-D rotation (its angle turned into a 2x2 matrix) and the training loss
wraps the prediction in a small Lie-group class, `SO2.from_matrix(rotation_ab_pred)`, to take its
log. The class checks that the matrix is a valid rotation (orthogonal, determinant 1) with numpy,
`mat.cpu().numpy()`, on the prediction itself: the prediction requires grad, so the check raises
"Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead"
(utiasSTARS/liegroups#4, "Can't call numpy() on Variable that requires grad"). The maintainer's fix
adds the missing `detach()` to the numpy calls of the validity check: the check reads values only,
the log that the loss uses keeps its graph.
Source: https://github.com/utiasSTARS/liegroups/issues/4
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class SO2:
    """A rotation of the plane stored as its 2x2 matrix (batched), as the library's torch SO2 is."""
    dim = 2

    def __init__(self, mat):
        self.mat = mat

    @classmethod
    def is_valid_matrix(cls, mat):
        m = mat.cpu().numpy()
        det = np.linalg.det(m)
        ortho = np.einsum("bji,bjk->bik", m, m) - np.eye(cls.dim)
        return bool(np.all(np.isclose(det, 1.0, atol=1e-5)) and np.all(np.abs(ortho) < 1e-5))

    @classmethod
    def from_matrix(cls, mat):
        if not cls.is_valid_matrix(mat):
            raise ValueError("Invalid rotation matrix.")
        return cls(mat)

    def log(self):
        return torch.atan2(self.mat[..., 1, 0], self.mat[..., 0, 0])


class PoseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, feats):
        theta = self.body(feats).squeeze(-1)
        c, s = torch.cos(theta), torch.sin(theta)
        return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


net = PoseNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
feats = torch.randn(8, 6)
target_angle = torch.rand(8) * 2.0 - 1.0

losses = []
for step in range(3):
    optimizer.zero_grad()
    rotation_ab_pred = net(feats)
    rvec_ab_pred = SO2.from_matrix(rotation_ab_pred)
    loss = ((rvec_ab_pred.log() - target_angle) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().clone())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
