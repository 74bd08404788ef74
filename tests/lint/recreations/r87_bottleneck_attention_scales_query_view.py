"""Bottleneck Transformer attention: the queries come from
`self.qkv(fmap).chunk(3, dim=1)`, rearranged into heads, and are scaled in
place (`q *= self.scale`); `chunk` returns views that may not be modified in
place ("Output 0 of SplitBackward0 is a view and is being modified inplace"
on recent PyTorch).  The merged fix uses out-of-place operations.
Source: https://github.com/lucidrains/bottleneck-transformer-pytorch/pull/14"""
import torch
from torch import einsum, nn


def rel_to_abs(x):
    b, h, l, _ = x.shape
    x = torch.cat((x, torch.zeros((b, h, l, 1))), dim=3)
    flat_x = x.reshape(b, h, l * 2 * l)
    flat_x = torch.cat((flat_x, torch.zeros((b, h, l - 1))), dim=2)
    final_x = flat_x.reshape(b, h, l + 1, 2 * l - 1)
    return final_x[:, :, :l, (l - 1):]


class AbsPosEmb(nn.Module):
    def __init__(self, fmap_size, dim_head):
        super().__init__()
        scale = dim_head ** -0.5
        self.height = nn.Parameter(torch.randn(fmap_size, dim_head) * scale)
        self.width = nn.Parameter(torch.randn(fmap_size, dim_head) * scale)

    def forward(self, q):
        emb = (self.height[:, None, :] + self.width[None, :, :]).reshape(-1, self.height.shape[-1])
        return einsum("b h i d, j d -> b h i j", q, emb)


class Attention(nn.Module):
    def __init__(self, *, dim, fmap_size, heads=2, dim_head=4):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = heads * dim_head
        self.qkv = nn.Conv2d(dim, inner_dim * 3, 1, bias=False)
        self.pos_emb = AbsPosEmb(fmap_size, dim_head)

    def forward(self, fmap):
        heads, b, c, h, w = self.heads, *fmap.shape
        q, k, v = self.qkv(fmap).chunk(3, dim=1)
        q, k, v = map(lambda t: t.reshape(b, heads, -1, h * w).transpose(-1, -2), (q, k, v))
        q *= self.scale  # missed: ADL015
        sim = einsum("b h i d, b h j d -> b h i j", q, k)
        sim += self.pos_emb(q)
        attn = sim.softmax(dim=-1)
        out = einsum("b h i j, b h j d -> b h i d", attn, v)
        return out.transpose(-1, -2).reshape(b, -1, h, w)


def run():
    torch.manual_seed(0)
    attention = Attention(dim=8, fmap_size=4)
    head = nn.Conv2d(8, 3, 1)
    optimizer = torch.optim.Adam(list(attention.parameters()) + list(head.parameters()), lr=1e-3)
    loss = head(attention(torch.randn(2, 8, 4, 4))).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
