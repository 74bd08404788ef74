"""Point-cloud convolution (KPConv-style): neighbour features are gathered with `x.gather(0, idx)`
where `idx` is a view of the neighbour-index tensor; the next layer maps the same index tensor to
the subsampled cloud in place (`neighbors //= 2`), and gather's backward needs the index it saved.
Source: https://github.com/torch-points3d/torch-points3d/issues/552 ("one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.LongTensor ...]"; fix in
the report: `return x.gather(0, idx.clone())` in the gather function).
expect: raises"""
import torch
import torch.nn as nn


def gather(x, idx):
    """Features of each point's neighbours: x (N, C), idx (M, K) -> (M, K, C)."""
    m, k = idx.shape
    idx = idx.reshape(-1, 1).expand(-1, x.shape[-1])
    return x.gather(0, idx).view(m, k, -1)


class PointConv(nn.Module):
    def __init__(self, c_in, c_out, num_kernel_points=4):
        super().__init__()
        self.kernel_points = nn.Parameter(torch.randn(num_kernel_points, 3) * 0.3)
        self.weights = nn.Linear(num_kernel_points * c_in, c_out)

    def forward(self, pos, features, neighbors):
        rel = gather(pos, neighbors) - pos[: neighbors.shape[0]].unsqueeze(1)
        influence = torch.relu(1 - (rel.unsqueeze(2) - self.kernel_points).norm(dim=-1))
        weighted = (influence.unsqueeze(-1) * gather(features, neighbors).unsqueeze(2)).sum(1)
        return self.weights(weighted.flatten(1))


torch.manual_seed(0)
num_points, k = 12, 4
pos = torch.rand(num_points, 3)
neighbors = torch.cdist(pos, pos).topk(k, largest=False).indices
embed = nn.Linear(3, 4)
conv1, conv2 = PointConv(4, 8), PointConv(8, 8)
head = nn.Linear(8, 2)

features = conv1(pos, embed(pos), neighbors)
# stride-2 subsampling keeps every other point: point i becomes point i // 2
neighbors //= 2
sub_pos = pos[::2]
features = conv2(sub_pos, features[::2], neighbors[::2])
loss = nn.functional.cross_entropy(head(features.mean(0, keepdim=True)), torch.tensor([1]))
loss.backward()
result = {"loss": loss.detach(), "grads": [embed.weight.grad, conv1.kernel_points.grad, conv1.weights.weight.grad, conv2.weights.weight.grad]}
