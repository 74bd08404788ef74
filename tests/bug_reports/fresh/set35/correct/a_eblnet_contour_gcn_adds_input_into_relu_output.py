"""EBLNet (hehao13/EBLNet), network/nn/contour_point_gcn.py: the GloRe-style `GCN` used by
`ContourPointGCN` computes `z = self.relu(self.bn_adj(self.conv_adj(x)))` and then does the
"Laplacian smoothing" in place, `z += x`. ReLU keeps its output for backward, so training fails at
`main_loss.backward()` with "one of the variables needed for gradient computation has been modified
by an inplace operation: [..., 96, 256]], which is output 0 of ReluBackward0, is at version 1;
expected version 0". The reporter found the cause himself ("the main reason is in the gsn.py, which
code have z+=4"); the fix is the out-of-place add, `z = z + x`.
Source: https://github.com/hehao13/EBLNet/issues/9
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_uncertain_point_coords_on_grid(uncertainty_map, num_points):
    R, _, H, W = uncertainty_map.shape
    num_points = min(H * W, num_points)
    point_indices = torch.topk(uncertainty_map.view(R, H * W), k=num_points, dim=1)[1]
    return point_indices


def point_sample(input, point_indices):
    N, C, H, W = input.shape
    point_indices = point_indices.unsqueeze(1).expand(-1, C, -1)
    flatten_input = input.flatten(start_dim=2)
    return flatten_input.gather(dim=2, index=point_indices).view_as(point_indices)


class GCN(nn.Module):
    def __init__(self, node_num, node_fea):
        super().__init__()
        self.conv_adj = nn.Conv1d(node_num, node_num, kernel_size=1, bias=False)
        self.bn_adj = nn.BatchNorm1d(node_num)
        self.conv_wg = nn.Conv1d(node_fea, node_fea, kernel_size=1, bias=False)
        self.bn_wg = nn.BatchNorm1d(node_fea)
        self.relu = nn.ReLU()

    def forward(self, x):
        z = self.conv_adj(x)
        z = self.bn_adj(z)
        z = self.relu(z)

        # Laplacian smoothing
        z = z + x
        z = z.transpose(1, 2).contiguous()
        z = self.conv_wg(z)
        z = self.bn_wg(z)
        z = self.relu(z)
        return z.transpose(1, 2).contiguous()


class ContourPointGCN(nn.Module):
    def __init__(self, inplane, num_points, thresholds=0.8):
        super().__init__()
        self.num_points = num_points
        self.thresholds = thresholds
        self.gcn = GCN(num_points, inplane)

    def forward(self, x, edge):
        B, C, H, W = x.size()
        edge[edge < self.thresholds] = 0
        edge_index = get_uncertain_point_coords_on_grid(edge, self.num_points)
        gcn_features = point_sample(x, edge_index).permute(0, 2, 1)
        gcn_features_reasoned = self.gcn(gcn_features).permute(0, 2, 1)
        edge_index = edge_index.unsqueeze(1).expand(-1, C, -1)
        return x.reshape(B, C, H * W).scatter(2, edge_index, gcn_features_reasoned).view(B, C, H, W)


class TinyEBLNet(nn.Module):
    def __init__(self, num_classes=2, width=8, num_points=12):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.edge_pre = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
        self.edge_out = nn.Conv2d(width, 1, 1, bias=False)
        self.body = nn.Conv2d(width, width, 3, padding=1)
        self.refine = ContourPointGCN(width, num_points, thresholds=0.5)
        self.final_out = nn.Conv2d(width, num_classes, 1)

    def forward(self, x):
        feat = self.stem(x)
        seg_edge = self.edge_pre(feat)
        seg_edge_out = self.edge_out(seg_edge)
        seg_out = self.body(feat) + seg_edge
        seg_out = self.refine(seg_out, torch.sigmoid(seg_edge_out.clone().detach()))
        return self.final_out(seg_out), seg_edge_out


model = TinyEBLNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
losses = []
for step in range(3):
    images = torch.randn(2, 3, 8, 8)
    gts = torch.randint(0, 2, (2, 8, 8))
    edge_gts = (torch.rand(2, 1, 8, 8) > 0.8).float()
    seg, edge = model(images)
    main_loss = F.cross_entropy(seg, gts) + F.binary_cross_entropy_with_logits(edge, edge_gts)
    optimizer.zero_grad()
    main_loss.backward()
    optimizer.step()
    losses.append(main_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
