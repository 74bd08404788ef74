"""Fresh shape of cause 2 of r736 (ADL015, a view of one output of `chunk` reached through a new
binding): a small vision-transformer encoder whose attention block splits the fused projection
with `qkv.chunk(3, dim=-1)`, rebinds each part to its heads (`q = q.view(b, n, h, d).transpose(1,
2)`, a view of the chunk under the same name), and then scales the query heads in place,
`q *= self.scale`, as a hand-tuned block saving one allocation would.  The heads are still a view
of one output of a function that returns several views, so the first forward with gradients on
raises.
Written in my own words as a transformer repository writes its attention block: patch embedding,
pre-norm blocks with an MLP, a class token, a classification head, and a training step.
Raises at `q *= self.scale` ("Output 0 of ... is a view and is being modified inplace. This view
is the output of a function that returns multiple views").
A fresh shape of cause 2 of r736 (split outputs aliased by name), docs/lint.md "Recall causes
worked on, stop 48"; the cause's report is r736's source.
Source: https://github.com/coolsunxu/MIM_Pytorch/blob/e3af23f18c491bbe06098b57995b9fe22cbf3d24/layers/MIMN.py"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, n, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, n, self.heads, self.head_dim).transpose(1, 2)
        q *= self.scale  # expect: ADL015
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, image_size=8, patch=4, dim=8, depth=2, classes=3):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, (image_size // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(x[:, 0])


def run():
    torch.manual_seed(0)
    model = TinyViT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    images, labels = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 0])
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
