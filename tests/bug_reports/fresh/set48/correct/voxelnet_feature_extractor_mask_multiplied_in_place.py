"""Training a VoxelNet-style 3D object detector on LiDAR point clouds from a driving simulator: the
voxel feature extractor runs two VFE layers (per-point linear + norm + ReLU, concatenated with the
voxel-wise max), then a final linear + norm + ReLU, and zeroes the padded points after each stage
with `features *= mask`. The last multiplication writes into the ReLU's output, which ReLU keeps for
its backward: "one of the variables needed for gradient computation has been modified by an
inplace operation: [torch.FloatTensor [..., 35, 128]], which is output 0 of ReluBackward0". The
change the reporter made: `features = features * mask` at the three places.
Source: https://github.com/dd-iuonac/object-detector-in-carla/issues/61
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_paddings_indicator(actual_num, max_num):
    max_num_range = torch.arange(max_num).view(1, -1)
    return actual_num.view(-1, 1) > max_num_range


class VFELayer(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.units = out_channels // 2
        self.linear = nn.Linear(in_channels, self.units)
        self.norm = nn.BatchNorm1d(self.units)

    def forward(self, inputs):
        voxel_count = inputs.shape[1]
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        pointwise = F.relu(x)
        aggregated = torch.max(pointwise, dim=1, keepdim=True)[0]
        repeated = aggregated.repeat(1, voxel_count, 1)
        return torch.cat([pointwise, repeated], dim=2)


class VoxelFeatureExtractor(nn.Module):
    def __init__(self, num_input_features=4, num_filters=(32, 128)):
        super().__init__()
        self.vfe1 = VFELayer(num_input_features + 3, num_filters[0])
        self.vfe2 = VFELayer(num_filters[0], num_filters[1])
        self.linear = nn.Linear(num_filters[1], num_filters[1])
        self.norm = nn.BatchNorm1d(num_filters[1])

    def forward(self, features, num_voxels):
        points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_voxels.type_as(features).view(-1, 1, 1)
        features_relative = features[:, :, :3] - points_mean
        features = torch.cat([features, features_relative], dim=-1)
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(num_voxels, voxel_count)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        features = self.vfe1(features)
        features = features * mask
        features = self.vfe2(features)
        features = features * mask
        features = self.linear(features)
        features = self.norm(features.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        features = F.relu(features)
        features = features * mask
        return torch.max(features, dim=1)[0]


class TinyVoxelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.vfe = VoxelFeatureExtractor()
        self.head = nn.Linear(128, 8)  # class score + box residuals per voxel

    def forward(self, voxels, num_points):
        return self.head(self.vfe(voxels, num_points))


model = TinyVoxelNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(3):
    voxels = torch.randn(24, 35, 4)
    num_points = torch.randint(1, 36, (24,))
    targets = torch.randn(24, 8)
    optimizer.zero_grad()
    loss = F.smooth_l1_loss(model(voxels, num_points), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": losses, "weights": [p.detach().clone() for p in model.parameters()]}
