"""A Flow++-style dequantization flow whose coupling network has a gated multi-head self-attention
block: the block projects the features once, `torch.split`s the projection into memory and query,
reshapes the query into heads and scales it in place, `q *= key_depth_per_head ** -0.5`. The query
is a view of one output of `split`, a function that returns several views, and the in-place scale
raises "Output 0 of ... is a view and is being modified inplace. This view is the output of a
function that returns multiple views" during the forward of the first training step
(chrischute/flowplusplus#6, "Output 0 of PermuteBackward0"). The change is the out-of-place scale,
`q = q * key_depth_per_head ** -0.5`.
Source: https://github.com/chrischute/flowplusplus/issues/6
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GatedAttn(nn.Module):
    def __init__(self, d_model, num_heads=2):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.in_proj = nn.Linear(d_model, 3 * d_model, bias=False)
        self.gate = nn.Linear(d_model, 2 * d_model)

    def forward(self, x):
        b, h, w, c = x.size()
        x = x.view(b, h * w, c)
        memory, query = torch.split(self.in_proj(x), (2 * c, c), dim=-1)
        q = self.split_last_dim(query, self.num_heads)
        k, v = [self.split_last_dim(t, self.num_heads) for t in torch.split(memory, self.d_model, dim=2)]
        key_depth_per_head = self.d_model // self.num_heads
        q = q * key_depth_per_head ** -0.5
        weights = F.softmax(torch.matmul(q, k.permute(0, 1, 3, 2)), dim=-1)
        x = torch.matmul(weights, v).permute(0, 2, 1, 3).reshape(b, h, w, c)
        a, g = self.gate(x).chunk(2, dim=-1)
        return a * torch.sigmoid(g)

    @staticmethod
    def split_last_dim(x, n):
        *rest, m = x.size()
        return x.view(*rest, n, m // n).permute(0, 2, 1, 3)


class Coupling(nn.Module):
    """Affine coupling: the second half of the channels is scaled and shifted by a network of the first."""
    def __init__(self, channels):
        super().__init__()
        half = channels // 2
        self.inp = nn.Linear(half, 8)
        self.attn = GatedAttn(8)
        self.out = nn.Linear(8, 2 * half)

    def forward(self, x, sldj):
        x_id, x_change = x.chunk(2, dim=-1)
        st = self.out(self.attn(torch.tanh(self.inp(x_id))))
        s, t = st.chunk(2, dim=-1)
        s = torch.tanh(s)
        x_change = x_change * s.exp() + t
        sldj = sldj + s.flatten(1).sum(-1)
        return torch.cat((x_change, x_id), dim=-1), sldj


flows = nn.ModuleList([Coupling(4), Coupling(4)])
optimizer = torch.optim.Adam(flows.parameters(), lr=1e-3)
x = torch.rand(2, 3, 3, 4)

losses = []
for step in range(2):
    optimizer.zero_grad()
    z, sldj = x, torch.zeros(x.size(0))
    for flow in flows:
        z, sldj = flow(z, sldj)
    prior_ll = -0.5 * (z ** 2 + math.log(2 * math.pi)).flatten(1).sum(-1)
    loss = -(prior_ll + sldj).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().clone())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in flows.parameters()]}
