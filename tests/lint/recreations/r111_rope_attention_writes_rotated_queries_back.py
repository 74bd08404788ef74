"""RoPE-ViT: `RoPEAttention.forward` splits `qkv` into views `q, k, v` and
writes the rotated patch queries and keys back into them,
`q[:, :, 1:], k[:, :, 1:] = apply_rotary_emb(q[:, :, 1:], k[:, :, 1:], ...)`.
`apply_rotary_emb` multiplies complex views of those same slices, and the
multiplication keeps them for backward; the write-back changes the storage
they share ("output 0 of ViewAsComplexBackward0, is at version 2; expected
version 0"; reproduced by the maintainer on torch 2.5).
Source: https://github.com/naver-ai/rope-vit/issues/14"""
from functools import partial

import torch
import torch.nn as nn


def init_2d_freqs(dim, num_heads, theta=10.0, rotate=True):
    freqs_x = []
    freqs_y = []
    mag = 1 / (theta ** (torch.arange(0, dim, 4)[: (dim // 4)].float() / dim))
    for i in range(num_heads):
        angles = torch.rand(1) * 2 * torch.pi if rotate else torch.zeros(1)
        fx = torch.cat([mag * torch.cos(angles), mag * torch.cos(torch.pi / 2 + angles)], dim=-1)
        fy = torch.cat([mag * torch.sin(angles), mag * torch.sin(torch.pi / 2 + angles)], dim=-1)
        freqs_x.append(fx)
        freqs_y.append(fy)
    return torch.stack([torch.stack(freqs_x, dim=0), torch.stack(freqs_y, dim=0)], dim=0)


def init_t_xy(end_x, end_y):
    t = torch.arange(end_x * end_y, dtype=torch.float32)
    t_x = (t % end_x).float()
    t_y = torch.div(t, end_x, rounding_mode='floor').float()
    return t_x, t_y


def compute_mixed_cis(freqs, t_x, t_y, num_heads):
    N = t_x.shape[0]
    freqs_x = (t_x.unsqueeze(-1) @ freqs[0].unsqueeze(-2)).view(N, num_heads, -1).permute(1, 0, 2)
    freqs_y = (t_y.unsqueeze(-1) @ freqs[1].unsqueeze(-2)).view(N, num_heads, -1).permute(1, 0, 2)
    return torch.polar(torch.ones_like(freqs_x), freqs_x + freqs_y)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.dim = dim
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)


class RoPEAttention(Attention):
    """Multi-head Attention block with rotary position embeddings."""

    def __init__(self, *args, rope_theta=10.0, grid=2, **kwargs):
        super().__init__(*args, **kwargs)
        self.compute_cis = partial(compute_mixed_cis, num_heads=self.num_heads)
        freqs = init_2d_freqs(dim=self.dim // self.num_heads, num_heads=self.num_heads, theta=rope_theta)
        self.rope_freqs = nn.Parameter(freqs, requires_grad=True)
        t_x, t_y = init_t_xy(end_x=grid, end_y=grid)
        self.register_buffer('freqs_t_x', t_x)
        self.register_buffer('freqs_t_y', t_y)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]

        freqs_cis = self.compute_cis(self.rope_freqs, self.freqs_t_x, self.freqs_t_y)
        q[:, :, 1:], k[:, :, 1:] = apply_rotary_emb(q[:, :, 1:], k[:, :, 1:], freqs_cis=freqs_cis)  # missed: ADL001

        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return self.proj_drop(x)


def run():
    torch.manual_seed(0)
    attn = RoPEAttention(16, num_heads=2)
    x = torch.randn(2, 5, 16)  # a class token and a 2x2 grid of patches
    loss = attn(x).pow(2).mean()
    loss.backward()
