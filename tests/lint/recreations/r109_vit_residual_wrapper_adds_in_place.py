"""glasses ViT: the transformer block wraps each sub-layer in a generic
`ResidualAdd(fn)` module whose forward is `out = self.fn(x); x += out`.  The
wrapped `fn` starts with `nn.LayerNorm`, which keeps its input `x` for
backward, so the in-place residual add breaks the block's backward ("ViT
inplace backward error"; the fix is `x = x + out`).
Source: https://github.com/FrancescoSaverioZuppichini/glasses/issues/207"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class PatchEmbedding(nn.Module):
    def __init__(self, in_channels=3, patch_size=4, emb_size=16, img_size=8):
        super().__init__()
        self.projection = nn.Conv2d(in_channels, emb_size, kernel_size=patch_size, stride=patch_size)
        self.cls = nn.Parameter(torch.randn(1, 1, emb_size))
        self.positions = nn.Parameter(torch.randn((img_size // patch_size) ** 2 + 1, emb_size))

    def forward(self, x: Tensor) -> Tensor:
        x = self.projection(x).flatten(2).transpose(1, 2)
        cls = self.cls.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1)
        x = x + self.positions
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, emb_size=16, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(emb_size, emb_size * 3)
        self.projection = nn.Linear(emb_size, emb_size)
        self.scaling = (emb_size // num_heads) ** -0.5

    def forward(self, x: Tensor) -> Tensor:
        b, n, e = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.num_heads, e // self.num_heads).permute(2, 0, 3, 1, 4)
        queries, keys, values = qkv[0], qkv[1], qkv[2]
        energy = torch.einsum('bhqd, bhkd -> bhqk', queries, keys) * self.scaling
        att = F.softmax(energy, dim=-1)
        out = torch.einsum('bhal, bhlv -> bhav ', att, values)
        out = out.transpose(1, 2).reshape(b, n, e)
        return self.projection(out)


class ResidualAdd(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        out = self.fn(x, **kwargs)
        x += out  # missed: ADL001
        return x


class FeedForwardBlock(nn.Sequential):
    def __init__(self, emb_size, expansion=4, drop_p=0.):
        super().__init__(
            nn.Linear(emb_size, expansion * emb_size), nn.GELU(), nn.Dropout(drop_p),
            nn.Linear(expansion * emb_size, emb_size), nn.Dropout(drop_p))


class TransformerEncoderBlock(nn.Sequential):
    def __init__(self, emb_size=16, forward_expansion=4, forward_drop_p=0., **kwargs):
        super().__init__(
            ResidualAdd(nn.Sequential(nn.LayerNorm(emb_size), MultiHeadAttention(emb_size, **kwargs))),
            ResidualAdd(nn.Sequential(nn.LayerNorm(emb_size),
                                      FeedForwardBlock(emb_size, expansion=forward_expansion, drop_p=forward_drop_p))))


class ViT(nn.Module):
    def __init__(self, depth=2, emb_size=16, n_classes=3):
        super().__init__()
        self.embedding = PatchEmbedding(emb_size=emb_size)
        self.encoder = nn.Sequential(*[TransformerEncoderBlock(emb_size) for _ in range(depth)])
        self.head = nn.Sequential(nn.LayerNorm(emb_size), nn.Linear(emb_size, n_classes))

    def forward(self, x):
        x = self.encoder(self.embedding(x))
        return self.head(x[:, 0])


def run():
    torch.manual_seed(0)
    model = ViT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss = F.cross_entropy(model(torch.randn(2, 3, 8, 8)), torch.tensor([0, 2]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
