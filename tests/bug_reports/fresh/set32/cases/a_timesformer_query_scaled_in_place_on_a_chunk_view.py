"""TimeSformer (lucidrains/TimeSformer-pytorch): the divided space-time `Attention.forward` splits
the projection with `q, k, v = self.to_qkv(x).chunk(3, dim = -1)`, rearranges each with
`rearrange(t, 'b n (h d) -> (b h) n d', h = h)` and then scales the queries in place,
`q *= self.scale`. For a single video the rearrange returns a view of the chunk, and training
fails in the forward with "Output 0 of ... is a view and is being modified inplace. This view is
an output of a function that returns multiple views. Inplace operators on such views is forbidden.
You should replace the inplace operation by an out-of-place one." The merged fix:
`q = q * self.scale`. (einops is not installed here: `rearrange` below does the same
reshape/permute/reshape.)
Source: https://github.com/lucidrains/TimeSformer-pytorch/pull/16
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rearrange_heads(t, h):
    """'b n (h d) -> (b h) n d'"""
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3).reshape(b * h, n, hd // h)


def merge_heads(t, h):
    """'(b h) n d -> b n (h d)'"""
    bh, n, d = t.shape
    return t.reshape(bh // h, h, n, d).permute(0, 2, 1, 3).reshape(bh // h, n, h * d)


def attn(q, k, v):
    sim = q @ k.transpose(-2, -1)
    return sim.softmax(dim=-1) @ v


class Attention(nn.Module):
    def __init__(self, dim, dim_head=8, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = dim_head * heads
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x, frames):
        h = self.heads
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange_heads(t, h), (q, k, v))
        q *= self.scale

        # splice out the classification token at index 0
        (cls_q, q_), (cls_k, k_), (cls_v, v_) = map(lambda t: (t[:, :1], t[:, 1:]), (q, k, v))
        cls_out = attn(cls_q, k, v)

        # attention over space within each frame ('(b h) (f n) d -> (b h f) n d')
        bh, fn, d = q_.shape
        q_, k_, v_ = map(lambda t: t.reshape(bh * frames, fn // frames, d), (q_, k_, v_))
        cls_k, cls_v = map(lambda t: t.repeat_interleave(frames, dim=0), (cls_k, cls_v))
        k_ = torch.cat((cls_k, k_), dim=1)
        v_ = torch.cat((cls_v, v_), dim=1)
        out = attn(q_, k_, v_).reshape(bh, fn, d)
        out = torch.cat((cls_out, out), dim=1)
        return self.to_out(merge_heads(out, h))


class TimeSformer(nn.Module):
    def __init__(self, dim=16, num_frames=2, image_size=8, patch_size=4, num_classes=5, depth=2):
        super().__init__()
        self.patch_size = patch_size
        self.to_patch_embedding = nn.Linear(3 * patch_size ** 2, dim)
        self.cls_token = nn.Parameter(torch.randn(1, dim))
        self.pos_emb = nn.Embedding(num_frames * (image_size // patch_size) ** 2 + 1, dim)
        self.layers = nn.ModuleList([nn.ModuleList([nn.LayerNorm(dim), Attention(dim), nn.LayerNorm(dim),
                                                    nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))])
                                     for _ in range(depth)])
        self.to_out = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def forward(self, video):
        b, f, c, hh, ww = video.shape
        p = self.patch_size
        x = video.reshape(b, f, c, hh // p, p, ww // p, p).permute(0, 1, 3, 5, 4, 6, 2).reshape(b, f * (hh // p) * (ww // p), p * p * c)
        x = self.to_patch_embedding(x)
        x = torch.cat((self.cls_token.expand(b, 1, -1), x), dim=1)
        x = x + self.pos_emb(torch.arange(x.shape[1]))
        for norm1, attention, norm2, ff in self.layers:
            x = attention(norm1(x), frames=f) + x
            x = ff(norm2(x)) + x
        return self.to_out(x[:, 0])


model = TimeSformer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(3):
    video = torch.randn(1, 2, 3, 8, 8)
    label = torch.randint(0, 5, (1,))
    loss = F.cross_entropy(model(video), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
