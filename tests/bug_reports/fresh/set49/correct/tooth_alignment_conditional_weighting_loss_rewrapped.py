"""Orthodontic tooth alignment from intra-oral point clouds (TANet): a network reads every tooth's
points and predicts, per tooth, a rigid move and a confidence vector Xi; the loss is the
conditional weighting of a geometric reconstruction term (chamfer distance between the moved
teeth and the target teeth after the ground-truth rigid transform) and a spatial relation term
(chamfer distance between each tooth's neighbours, clamped to +-sigma), scaled by
1/exp(|Xi|). Each of the three loss modules ends with `loss = Variable(loss,
requires_grad=True)`, and the outer one first writes every sample's term into
`torch.FloatTensor(torch.zeros(B))`: the returned loss is a new leaf with no history, so
backward() reaches no weight of the network and training silently changes nothing (the loss
value is right, the gradients are all None). The change returns the losses themselves, keeping
the graph back to the network.
Source: https://github.com/ziyangyeh/TANet-Pytorch/blob/1ef1c6212d6ccf43c8de8c19ddc09906d6ba3dcd/losses/conditional_weighting_loss.py
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def chamfer_distance(x, y):
    # pytorch3d.loss.chamfer_distance(x, y, point_reduction="sum", batch_reduction="mean")
    d = torch.cdist(x, y) ** 2
    return (d.min(dim=2).values.sum(dim=1) + d.min(dim=1).values.sum(dim=1)).mean(), None


def transform_points(matrix, points):
    # pytorch3d.transforms.Transform3d(matrix=matrix).transform_points(points): row vectors
    homogeneous = torch.cat([points, torch.ones_like(points[..., :1])], dim=-1)
    return (homogeneous @ matrix)[..., :3]


class GeometricReconstructionLoss(nn.Module):
    def forward(self, X_v, target_X_v, rig_trans_matrix, device):
        loss = torch.FloatTensor([0]).to(device)
        for idx in range(X_v.shape[0]):
            riged_tar = transform_points(rig_trans_matrix[idx, :, :], target_X_v[idx, :, :]).unsqueeze(0)
            tmp, _ = chamfer_distance(X_v[idx, :, :].unsqueeze(0), riged_tar)
            loss += tmp
        return loss


class GeometricSpatialRelationLoss(nn.Module):
    def __init__(self, sigma):
        super().__init__()
        self.sigma = sigma

    def forward(self, X_v, target_X_v, node_idx, device):
        loss = torch.FloatTensor([0]).to(device)
        c_X_v = torch.clamp(X_v, min=-self.sigma, max=self.sigma)
        c_target_X_v = torch.clamp(target_X_v, min=-self.sigma, max=self.sigma)
        for idx in range(node_idx):
            sub_c_X_v = torch.cat([c_X_v[:idx], c_X_v[idx + 1:]], dim=0).reshape(1, -1, 3)
            sub_c_target_X_v = torch.cat([c_target_X_v[:idx], c_target_X_v[idx + 1:]], dim=0).reshape(1, -1, 3)
            tmp, _ = chamfer_distance(sub_c_X_v, sub_c_target_X_v)
            loss += tmp
        return loss


class ConditionalWeightingLoss(nn.Module):
    def __init__(self, sigma=5):
        super().__init__()
        self.recon_loss = GeometricReconstructionLoss()
        self.spatial_loss = GeometricSpatialRelationLoss(sigma=sigma)

    def forward(self, X_v, target_X_v, rig_trans_matrix, node_idx, Xi, device):
        loss = torch.FloatTensor(torch.zeros((X_v.shape[0],))).to(device)
        for idx in range(X_v.shape[0]):
            loss_recon = self.recon_loss(X_v[idx], target_X_v[idx], rig_trans_matrix[idx], device)
            loss_spatial = self.spatial_loss(X_v[idx], target_X_v[idx], node_idx, device)
            tmp = torch.min((loss_recon + loss_spatial) * (1 / torch.exp(torch.norm(Xi[idx], dim=1))))
            loss[idx] = tmp
        loss = torch.sum(loss) / X_v.shape[0]
        return loss


class ToothAligner(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.move = nn.Linear(hidden, 3)
        self.xi = nn.Linear(hidden, 4)

    def forward(self, teeth):  # teeth: B x T x P x 3
        feature = self.encoder(teeth).max(dim=2).values
        return teeth + self.move(feature).unsqueeze(2), self.xi(feature)


B, T, P = 2, 4, 16
model = ToothAligner()
loss_fn = ConditionalWeightingLoss(sigma=5)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
teeth = torch.randn(B, T, P, 3)
target = teeth + 0.5
rig = torch.eye(4).repeat(B, T, 1, 1)
losses = []
for step in range(5):
    X_v, Xi = model(teeth)
    loss = loss_fn(X_v, target, rig, T, Xi, torch.device("cpu"))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
result = {"losses": torch.tensor(losses), "weights": [p.detach().clone() for p in model.parameters()]}
