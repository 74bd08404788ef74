"""KTPFormer (3D human pose lifting), issue 15: training raises "one of the variables needed
for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor
[1944, 17, 512]], which is output 0 of ReluBackward0".  `KPAttention.forward` starts with
`x = self.kpa(x)` -- the `KPA` block (a learnable graph convolution, batch norm, then
`x = self.relu(x); return x`) -- and then adds the spatial position embedding in place,
`x += self.Spatial_pos_embed`.  `nn.ReLU` keeps its output for the backward, so the in-place
add bumps the version of a saved tensor.  (The temporal branch, `TPAttention`, does the same
after `StackedTPA`, whose forward returns `residual + out`; an addition saves nothing, so that
one is harmless.)
Re-created in my own words with the same classes (`LearnableGraphConv`, `KPA`, `KPAttention`
with its attention and residual), small sizes and an MSE loss.
Buggy line: `x += self.Spatial_pos_embed`.
Source: https://github.com/JihuaPeng/KTPFormer/issues/15"""
import math

import torch
import torch.nn as nn


class LearnableGraphConv(nn.Module):
    def __init__(self, in_features, out_features, adj):
        super().__init__()
        self.W = nn.Parameter(torch.zeros(size=(2, in_features, out_features)))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        self.M = nn.Parameter(torch.ones(size=(adj.size(0), out_features)))
        self.adj = adj
        self.adj2 = nn.Parameter(torch.ones_like(adj))
        nn.init.constant_(self.adj2, 1e-6)
        self.bias = nn.Parameter(torch.zeros(out_features))
        stdv = 1.0 / math.sqrt(self.W.size(2))
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input):
        h0 = torch.matmul(input, self.W[0])
        h1 = torch.matmul(input, self.W[1])
        adj = self.adj + self.adj2
        adj = (adj.T + adj) / 2
        E = torch.eye(adj.size(0))
        output = torch.matmul(adj * E, self.M * h0) + torch.matmul(adj * (1 - E), self.M * h1)
        return output + self.bias.view(1, 1, -1)


class KPA(nn.Module):
    def __init__(self, adj, input_dim, output_dim, p_dropout=None):
        super().__init__()
        self.gconv = LearnableGraphConv(input_dim, output_dim, adj)
        self.bn = nn.BatchNorm1d(output_dim)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(p_dropout) if p_dropout is not None else None

    def forward(self, x):
        x = self.gconv(x).transpose(1, 2)
        x = self.bn(x).transpose(1, 2)
        if self.dropout is not None:
            x = self.dropout(self.relu(x))
        x = self.relu(x)
        return x


class KPAttention(nn.Module):
    def __init__(self, adj, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.kpa = KPA(adj, 2, dim, p_dropout=None)
        self.proj = nn.Linear(dim, dim)
        self.Spatial_pos_embed = nn.Parameter(torch.zeros(1, adj.size(0), dim))
        self.norm1 = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.kpa(x)
        x += self.Spatial_pos_embed  # expect: ADL001
        res = x.clone()
        x = self.norm1(x)
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return res + self.proj(x)


def run():
    torch.manual_seed(0)
    joints = 5
    adj = (torch.rand(joints, joints) > 0.5).float()
    model = KPAttention(adj, dim=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs_2d, target = torch.randn(4, joints, 2), torch.randn(4, joints, 8)
    loss = ((model(inputs_2d) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
