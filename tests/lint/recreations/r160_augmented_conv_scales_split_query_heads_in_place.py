"""Attention-augmented convolution (copied into a 2D hand-pose estimation
repository from Attention-Augmented-Conv2d): `compute_flat_qkv` splits the
qkv convolution's output with `torch.split`, reshapes each part into heads
in a helper (`split_heads_2d`, a `torch.reshape` that returns a view here),
and then scales the query heads in place, `q *= dkh ** -0.5`.  The reshape
is a view of one output of `split`, a function that returns several views,
so the first forward pass in training fails ("Output 0 of
ReshapeAliasBackward0 is a view and is being modified inplace. This view is
the output of a function that returns multiple views"); the fix is
`q = q * dkh ** -0.5`.
Source: https://github.com/hanchenchen/Attention-A-Lightweight-2D-Hand-Pose-Estimation-Approach-Pytorch/issues/4"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AugmentedConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dk, dv, Nh, stride=1):
        super().__init__()
        self.out_channels = out_channels
        self.dk = int(dk * out_channels)
        self.dv = int(dv * out_channels)
        self.Nh = Nh
        self.padding = (0, 1, 0, 1)
        self.conv_out = nn.Conv2d(in_channels, out_channels - self.dv, kernel_size, stride=stride, padding=1)
        self.qkv_conv = nn.Conv2d(in_channels, 2 * self.dk + self.dv, kernel_size=kernel_size, stride=stride, padding=1)
        self.attn_out = nn.Conv2d(self.dv, self.dv, kernel_size=1, stride=1)

    def forward(self, x):
        conv_out = self.conv_out(x)
        batch, _, height, width = conv_out.size()
        flat_q, flat_k, flat_v, q, k, v = self.compute_flat_qkv(x, self.dk, self.dv, self.Nh)
        logits = torch.matmul(flat_q.transpose(2, 3), flat_k)
        weights = F.softmax(logits, dim=-1)
        attn_out = torch.matmul(weights, flat_v.transpose(2, 3))
        attn_out = torch.reshape(attn_out, (batch, self.Nh, self.dv // self.Nh, height, width))
        attn_out = self.combine_heads_2d(attn_out)
        attn_out = self.attn_out(attn_out)
        return torch.cat((conv_out, attn_out), dim=1)

    def compute_flat_qkv(self, x, dk, dv, Nh):
        qkv = self.qkv_conv(x)
        N, _, H, W = qkv.size()
        q, k, v = torch.split(qkv, [dk, dk, dv], dim=1)
        q = self.split_heads_2d(q, Nh)
        k = self.split_heads_2d(k, Nh)
        v = self.split_heads_2d(v, Nh)
        dkh = dk // Nh
        q *= dkh ** -0.5  # missed: ADL015
        flat_q = torch.reshape(q, (N, Nh, dk // Nh, H * W))
        flat_k = torch.reshape(k, (N, Nh, dk // Nh, H * W))
        flat_v = torch.reshape(v, (N, Nh, dv // Nh, H * W))
        return flat_q, flat_k, flat_v, q, k, v

    def split_heads_2d(self, x, Nh):
        batch, channels, height, width = x.size()
        ret_shape = (batch, Nh, channels // Nh, height, width)
        split = torch.reshape(x, ret_shape)
        return split

    def combine_heads_2d(self, x):
        batch, Nh, dv, H, W = x.size()
        ret_shape = (batch, Nh * dv, H, W)
        return torch.reshape(x, ret_shape)


class HandPoseNet(nn.Module):
    def __init__(self, num_joints=3):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.arb = AugmentedConv(in_channels=8, out_channels=8, kernel_size=3, dk=0.5, dv=0.5, Nh=2)
        self.head = nn.Conv2d(8, num_joints, 1)

    def forward(self, x):
        return self.head(F.relu(self.arb(F.relu(self.stem(x)))))


def run():
    torch.manual_seed(0)
    model = HandPoseNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    heatmaps = model(torch.randn(2, 3, 8, 8))
    loss = F.mse_loss(heatmaps, torch.rand(2, 3, 8, 8))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
