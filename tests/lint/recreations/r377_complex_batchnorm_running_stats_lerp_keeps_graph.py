"""DeepComplexCRN's `ComplexBatchNorm` tracks running statistics with
`self.RMr.lerp_(Mr, exponential_average_factor)` (and the same for the
imaginary mean and the covariance terms), where `Mr` is the batch mean of the
input, computed with its graph.  The in-place lerp turns each buffer into a
graph tensor that links every training step's graph to the next one: memory
grew steadily during training.  Nothing raises.  The fix updates the
statistics from detached batch statistics (or under `torch.no_grad()`).
Buggy line: `self.RMr.lerp_(Mr.squeeze(), exponential_average_factor)` in
`ComplexBatchNorm.forward`.
Source: https://github.com/huyanxin/DeepComplexCRN/issues/20"""
import torch
import torch.nn as nn


class ComplexBatchNorm(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, track_running_stats=True):
        super().__init__()
        self.num_features = num_features // 2
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        self.Wrr = nn.Parameter(torch.ones(self.num_features))
        self.Wii = nn.Parameter(torch.ones(self.num_features))
        self.Br = nn.Parameter(torch.zeros(self.num_features))
        self.Bi = nn.Parameter(torch.zeros(self.num_features))
        self.register_buffer("RMr", torch.zeros(self.num_features))
        self.register_buffer("RMi", torch.zeros(self.num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, inputs):
        xr, xi = torch.chunk(inputs, 2, dim=1)
        exponential_average_factor = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            exponential_average_factor = self.momentum
        redux = [2, 0]
        vdim = [1, self.num_features, 1]
        if self.training:
            Mr, Mi = xr, xi
            for d in redux:
                Mr = Mr.mean(d, keepdim=True)
                Mi = Mi.mean(d, keepdim=True)
            if self.track_running_stats:
                self.RMr.lerp_(Mr.squeeze(), exponential_average_factor)  # expect: ADL017
                self.RMi.lerp_(Mi.squeeze(), exponential_average_factor)  # expect: ADL017
        else:
            Mr = self.RMr.view(vdim)
            Mi = self.RMi.view(vdim)
        xr = xr - Mr.view(vdim)
        xi = xi - Mi.view(vdim)
        yr = self.Wrr.view(vdim) * xr + self.Br.view(vdim)
        yi = self.Wii.view(vdim) * xi + self.Bi.view(vdim)
        return torch.cat([yr, yi], 1)


class ComplexEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.bn = ComplexBatchNorm(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def bug_shows():
    """After two training steps the running mean is a graph tensor whose
    graph reaches back through both steps."""
    torch.manual_seed(0)
    model = ComplexEncoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(2, 4, 6)).pow(2).mean().backward()
        optimizer.step()
    return model.bn.RMr.grad_fn is not None
