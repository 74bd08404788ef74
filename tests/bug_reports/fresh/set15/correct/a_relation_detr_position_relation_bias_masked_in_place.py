"""Relation-DETR's position relation encoder (xiuqhou/Relation-DETR,
models/bricks/relation_transformer.py): `PositionRelationEmbedding.forward` turns pairwise box
geometry into a per-head attention bias with a 1x1 conv followed by `ReLU(inplace=True)` and
returns that output; the decoder then masks it in place,
`pos_relation.masked_fill_(attn_mask, float("-inf"))`, before using it as the self-attention bias.
The in-place ReLU kept its output for its backward, so `loss.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation: ... which is
output 0 of ReluBackward0".
Source: https://github.com/xiuqhou/Relation-DETR/issues/5 (the fix, commit 3a310d8 "Fix inplace
error using clone (#5)": the embedding returns `pos_embed.clone()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

HEADS, QUERIES, DIM, FEATS = 2, 5, 8, 6


def box_relation_features(boxes):
    """Pairwise (dx, dy, log w ratio, log h ratio) of boxes (cx, cy, w, h): [B, Q, Q, 4]."""
    delta = (boxes[:, None, :, :2] - boxes[:, :, None, :2]).abs() / boxes[:, :, None, 2:]
    scale = torch.log(boxes[:, None, :, 2:] / boxes[:, :, None, 2:])
    return torch.cat([torch.log1p(delta), scale], dim=-1)


class PositionRelationEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_proj = nn.Sequential(nn.Conv2d(4 * FEATS, HEADS, 1), nn.ReLU(inplace=True))
        self.freqs = torch.linspace(1.0, 8.0, FEATS // 2)

    def forward(self, boxes):
        with torch.no_grad():
            rel = box_relation_features(boxes)[..., None] * self.freqs
            pos_embed = torch.cat([rel.sin(), rel.cos()], dim=-1).flatten(-2).permute(0, 3, 1, 2).contiguous()
        pos_embed = self.pos_proj(pos_embed)
        return pos_embed.clone()


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.position_relation_embedding = PositionRelationEmbedding()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.box_head = nn.Linear(DIM, 4)

    def forward(self, queries, boxes, attn_mask):
        pos_relation = self.position_relation_embedding(boxes).flatten(0, 1)  # [B * heads, Q, Q]
        pos_relation.masked_fill_(attn_mask, float("-inf"))
        q, k, v = self.qkv(queries).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (HEADS, DIM // HEADS)).transpose(1, 2).flatten(0, 1) for t in (q, k, v))
        weights = torch.softmax(q @ k.transpose(1, 2) / (DIM // HEADS) ** 0.5 + pos_relation, dim=-1)
        out = (weights @ v).unflatten(0, (-1, HEADS)).transpose(1, 2).flatten(2)
        return self.box_head(out)


layer = DecoderLayer()
optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-3)
queries = torch.randn(2, QUERIES, DIM)
boxes = torch.rand(2, QUERIES, 4) * 0.5 + 0.25
attn_mask = torch.zeros(2 * HEADS, QUERIES, QUERIES, dtype=torch.bool)
attn_mask[:, :, -1] = True  # the last query is padding: nobody attends to it
attn_mask[:, -1, -1] = False
targets = torch.rand(2, QUERIES, 4)

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.l1_loss(layer(queries, boxes, attn_mask), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in layer.parameters()]}
