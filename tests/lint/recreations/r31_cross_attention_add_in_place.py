"""A byte-level encoder adds the cross-attention result in place to the patch
embeddings it attended from (`patch_embeds += patch_embeds_cross`); the
cross-attention's layer norm kept those embeddings for its backward, which
then fails.
Source: https://github.com/facebookresearch/blt/pull/85"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossAttention(nn.Module):
    def __init__(self, dim, head_dim, n_heads, norm_eps=1e-5):
        super().__init__()
        self.head_dim = head_dim
        self.n_heads = n_heads
        self.cross_attn_norm_q = nn.LayerNorm(dim, eps=norm_eps)
        self.cross_attn_norm_kv = nn.LayerNorm(dim, eps=norm_eps)
        self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wk = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wv = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x, kv, mask=None):
        bsz, seq_len, _ = x.shape
        _, slen_kv, _ = kv.shape
        x_norm = self.cross_attn_norm_q(x)
        kv = self.cross_attn_norm_kv(kv)
        xq = self.wq(x_norm).view(bsz, seq_len, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.wk(kv).view(bsz, slen_kv, self.n_heads, self.head_dim).transpose(1, 2)
        xv = self.wv(kv).view(bsz, slen_kv, self.n_heads, self.head_dim).transpose(1, 2)
        output = F.scaled_dot_product_attention(xq, xk, xv, attn_mask=mask)
        output = output.transpose(1, 2).reshape(bsz, seq_len, self.n_heads * self.head_dim)
        return self.wo(output)


def patch_reduce(h, max_num_patches, reduction, patch_ids):
    bs, seq_len, emb_dim = h.shape
    patch_ids = patch_ids.unsqueeze(-1).expand(-1, -1, emb_dim)
    reduced_embs = torch.zeros((bs, max_num_patches, emb_dim), dtype=h.dtype)
    reduced_embs = reduced_embs.scatter_reduce(src=h, dim=1, index=patch_ids, reduce=reduction, include_self=False)
    return reduced_embs[:, :max_num_patches, :]


class LocalEncoder(nn.Module):
    def __init__(self, dim=8, n_layers=2, n_heads=2, cross_attn_k=1):
        super().__init__()
        self.dim = dim
        self.cross_attn_k = cross_attn_k
        self.tok_embeddings = nn.Embedding(32, dim)
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])
        self.patch_embedding_projection = nn.Linear(dim, dim * cross_attn_k, bias=False)
        self.cross_attn_layers = nn.ModuleList(
            [CrossAttention(dim, dim // n_heads, n_heads) for _ in range(n_layers)]
        )

    def apply_cross_attention(self, h, patch_embeds, layer_idx, bs, num_patches, patch_ids, cross_mask):
        if patch_embeds is None:
            patch_embeds = patch_reduce(h, num_patches, "amax", patch_ids)
            patch_embeds = self.patch_embedding_projection(patch_embeds)
            patch_embeds = patch_embeds.reshape(bs, patch_embeds.shape[1] * self.cross_attn_k, self.dim)
        patch_embeds_cross = self.cross_attn_layers[layer_idx](x=patch_embeds, kv=h, mask=cross_mask)
        patch_embeds += patch_embeds_cross  # missed: ADL001
        return patch_embeds

    def forward(self, tokens, patch_ids, num_patches):
        bs, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        patch_embeds = None
        for i, layer in enumerate(self.layers):
            h = torch.tanh(layer(h))
            patch_embeds = self.apply_cross_attention(h, patch_embeds, i, bs, num_patches, patch_ids, None)
        return h, patch_embeds


def run():
    encoder = LocalEncoder()
    tokens = torch.randint(0, 32, (2, 6))
    patch_ids = torch.tensor([[0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 2]])
    h, patch_embeds = encoder(tokens, patch_ids, 3)
    (h.sum() + patch_embeds.sum()).backward()
