"""BiFPN "fast normalized fusion" in an EfficientDet re-implementation (tristandb/EfficientDet-PyTorch,
bifpn.py `BiFPNBlock.forward`): the learnable fusion weights go through a ReLU and are then
normalized in place, `w1 /= torch.sum(w1, dim=0) + eps` and the same for `w2`. ReLU keeps its
output for its backward, so the first `loss.backward()` raises "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.FloatTensor [3, 4]], which
is output 0 of ReluBackward0". Both normalizations are written the same way: changing only the
first still fails on the second.
Source: https://github.com/tristandb/EfficientDet-PyTorch/issues/7 ("after narrowing down the
problem to the BiFPN code, the fix is to change these lines" to out-of-place divisions).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CHANNELS = 4


class BiFPNBlock(nn.Module):
    """Three pyramid levels; top-down then bottom-up, each node a weighted sum of its inputs."""

    def __init__(self, epsilon=1e-4):
        super().__init__()
        self.epsilon = epsilon
        self.td = nn.ModuleList(nn.Conv2d(CHANNELS, CHANNELS, 1) for _ in range(2))
        self.out = nn.ModuleList(nn.Conv2d(CHANNELS, CHANNELS, 1) for _ in range(2))
        self.w1 = nn.Parameter(torch.ones(2, 2))
        self.w1_relu = nn.ReLU()
        self.w2 = nn.Parameter(torch.ones(3, 2))
        self.w2_relu = nn.ReLU()

    def forward(self, inputs):
        p3, p4, p5 = inputs
        w1 = self.w1_relu(self.w1)
        w1 = w1 / (torch.sum(w1, dim=0) + self.epsilon)
        w2 = self.w2_relu(self.w2)
        w2 = w2 / (torch.sum(w2, dim=0) + self.epsilon)

        p4_td = self.td[0](w1[0, 0] * p4 + w1[1, 0] * F.interpolate(p5, scale_factor=2))
        p3_td = self.td[1](w1[0, 1] * p3 + w1[1, 1] * F.interpolate(p4_td, scale_factor=2))
        p4_out = self.out[0](w2[0, 0] * p4 + w2[1, 0] * p4_td + w2[2, 0] * F.max_pool2d(p3_td, 2))
        p5_out = self.out[1](w2[0, 1] * p5 + w2[1, 1] * p5 + w2[2, 1] * F.max_pool2d(p4_out, 2))
        return [p3_td, p4_out, p5_out]


block = BiFPNBlock()
optimizer = torch.optim.SGD(block.parameters(), lr=0.05)
features = [torch.randn(2, CHANNELS, 8, 8), torch.randn(2, CHANNELS, 4, 4), torch.randn(2, CHANNELS, 2, 2)]
targets = [torch.randn_like(f) for f in features]

losses = []
for step in range(3):
    optimizer.zero_grad()
    outputs = block(features)
    loss = sum(F.mse_loss(o, t) for o, t in zip(outputs, targets))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in block.parameters()]}
