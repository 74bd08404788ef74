"""A ViT decoder adds its position embedding in place to the token it is
given (`token += self.de_pos_embedding`).  With two decoders on the same
quantised tokens, the second decoder's write changes the tensor the first
decoder's layer norm kept, and backward() fails.
Source: https://github.com/thuanz123/enhancing-transformers/issues/11"""
import torch
import torch.nn as nn


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, dim))

    def forward(self, x):
        return self.net(x)


class Transformer(nn.Module):
    def __init__(self, dim, depth, mlp_dim):
        super().__init__()
        self.layers = nn.ModuleList([PreNorm(dim, FeedForward(dim, mlp_dim)) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for ff in self.layers:
            x = ff(x) + x
        return self.norm(x)


class ViTDecoder(nn.Module):
    def __init__(self, num_patches, dim, depth, mlp_dim, patch_dim):
        super().__init__()
        self.de_pos_embedding = nn.Parameter(torch.randn(1, num_patches, dim) * 0.02)
        self.transformer = Transformer(dim, depth, mlp_dim)
        self.to_pixel = nn.Linear(dim, patch_dim)

    def forward(self, token):
        x = token
        x += self.de_pos_embedding
        x = self.transformer(x)
        return self.to_pixel(x)


class DualDecoderVQ(nn.Module):
    def __init__(self, num_patches=4, dim=8, embed_dim=4, patch_dim=12):
        super().__init__()
        self.encoder = nn.Linear(patch_dim, dim)
        self.pre_quant = nn.Linear(dim, embed_dim)
        self.post_quant = nn.Linear(embed_dim, dim)
        self.decoder_a = ViTDecoder(num_patches, dim, 1, 16, patch_dim)
        self.decoder_b = ViTDecoder(num_patches, dim, 2, 16, patch_dim)

    def forward(self, patches):
        h = self.pre_quant(self.encoder(patches))
        quant = self.post_quant(h)
        rec_a = self.decoder_a(quant)
        rec_b = self.decoder_b(quant)  # expect: ADL001
        return rec_a, rec_b


def run():
    model = DualDecoderVQ()
    patches = torch.randn(2, 4, 12)
    rec_a, rec_b = model(patches)
    loss = (rec_a - patches).abs().mean() + (rec_b - patches).abs().mean()
    loss.backward()
