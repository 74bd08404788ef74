"""PointNetLK (point-cloud registration with a PointNet feature and Lucas-Kanade iterations): with
zero-mean clouds, `do_forward` builds the centring transforms from an identity expanded over the
batch, `a0 = torch.eye(4).view(1, 4, 4).expand(B, 4, 4).to(p0)`, and writes the centroid into
it, `a0[:, 0:3, 3] = p0_m`. Where `.to(p0)` copies nothing (same device and dtype, as on CPU),
`a0` is still the expanded view whose batch rows share one memory location, and training stops
with "unsupported operation: more than one element of the written-to tensor refers to a single
memory location. Please clone() the tensor before performing the operation." The answer in the
thread: add `.clone()` after the expand, on both `a0` and `a1`.
Source: https://github.com/hmgoforth/PointNetLK/issues/14
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def twist_to_transform(x):
    """Small-angle exponential map: x = (w, v) in R^6 -> 4x4 rigid transform."""
    w, v = x[:, :3], x[:, 3:]
    zero = torch.zeros_like(w[:, 0])
    skew = torch.stack([zero, -w[:, 2], w[:, 1], w[:, 2], zero, -w[:, 0], -w[:, 1], w[:, 0], zero], 1).view(-1, 3, 3)
    R = torch.eye(3).expand_as(skew) + skew
    top = torch.cat([R, v.unsqueeze(-1)], dim=2)
    bottom = torch.tensor([0.0, 0.0, 0.0, 1.0]).expand(x.shape[0], 1, 4)
    return torch.cat([top, bottom], dim=1)


def transform(g, p):
    return p @ g[:, :3, :3].transpose(1, 2) + g[:, :3, 3].unsqueeze(1)


class PointNetFeatures(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, points):
        return self.mlp(points).max(dim=1)[0]


class PointLK(nn.Module):
    def __init__(self, delta=1e-2):
        super().__init__()
        self.ptnet = PointNetFeatures()
        self.delta = delta

    def approx_jacobian(self, p0, f0):
        B = p0.shape[0]
        columns = []
        for i in range(6):
            dx = torch.zeros(B, 6)
            dx[:, i] = self.delta
            columns.append((self.ptnet(transform(twist_to_transform(dx), p0)) - f0) / self.delta)
        return torch.stack(columns, dim=2)

    def iclk(self, p0, p1, maxiter):
        B = p0.shape[0]
        g = torch.eye(4).expand(B, 4, 4)
        f0 = self.ptnet(p0)
        J = self.approx_jacobian(p0, f0)
        pinv = torch.linalg.pinv(J)
        for _ in range(maxiter):
            f1 = self.ptnet(transform(g, p1))
            dx = -(pinv @ (f1 - f0).unsqueeze(-1)).squeeze(-1)
            g = twist_to_transform(dx) @ g
        return g

    def do_forward(self, p0, p1, maxiter=3, p0_zero_mean=True, p1_zero_mean=True):
        a0 = torch.eye(4).view(1, 4, 4).expand(p0.size(0), 4, 4).to(p0)
        a1 = torch.eye(4).view(1, 4, 4).expand(p1.size(0), 4, 4).to(p1)
        if p0_zero_mean:
            p0_m = p0.mean(dim=1)
            a0[:, 0:3, 3] = p0_m
            q0 = p0 - p0_m.unsqueeze(1)
        else:
            q0 = p0
        if p1_zero_mean:
            p1_m = p1.mean(dim=1)
            a1[:, 0:3, 3] = -p1_m
            q1 = p1 - p1_m.unsqueeze(1)
        else:
            q1 = p1
        g = self.iclk(q0, q1, maxiter)
        return a0 @ g @ a1


model = PointLK()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(3):
    p0 = torch.randn(4, 32, 3)
    twist = torch.randn(4, 6) * 0.05
    igt = twist_to_transform(twist)
    p1 = transform(igt, p0)
    est_g = model.do_forward(p0, p1)
    loss = F.mse_loss(est_g @ igt, torch.eye(4).expand(4, 4, 4))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
