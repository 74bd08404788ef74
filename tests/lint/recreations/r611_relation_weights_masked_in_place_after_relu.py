"""An issue on a DETR-style detector: training fails with "modified by an
inplace operation: [torch.cuda.FloatTensor [1, 8, 1092, 1092]], which is
output 0 of ReluBackward0", a batch x heads x queries x queries tensor: the
position-relation weights between boxes.  Re-created as a decoder layer that
embeds pairwise box geometry, passes it through a linear layer and ReLU to
get per-head relation weights, blanks the padded query pairs with an
in-place `masked_fill_`, and adds the weights to the attention logits, in a
small training loop.  Raises at the first backward.
Buggy line: `relation.masked_fill_(pad_mask, 0.0)` (writes the ReLU output
that ReLU's backward saved).
Source: https://github.com/xiuqhou/Salience-DETR/issues/30"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def box_pair_features(boxes):
    cxcy, wh = boxes[..., :2], boxes[..., 2:].clamp(min=1e-3)
    delta = (cxcy[:, :, None, :] - cxcy[:, None, :, :]) / wh[:, :, None, :]
    scale = torch.log(wh[:, :, None, :] / wh[:, None, :, :])
    return torch.cat([delta, scale], dim=-1)


class RelationDecoderLayer(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.heads = heads
        self.pos_proj = nn.Linear(4, heads)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, queries, boxes, pad_mask):
        b, n, d = queries.shape
        relation = F.relu(self.pos_proj(box_pair_features(boxes))).permute(0, 3, 1, 2)
        relation.masked_fill_(pad_mask, 0.0)  # expect: ADL001
        q, k, v = self.qkv(queries).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5 + relation
        attn = logits.softmax(dim=-1)
        return self.out((attn @ v).transpose(1, 2).reshape(b, n, d))


def run():
    torch.manual_seed(0)
    layer = RelationDecoderLayer()
    head = nn.Linear(16, 4)
    optimizer = torch.optim.AdamW(list(layer.parameters()) + list(head.parameters()), lr=1e-4)
    for _ in range(2):
        queries = torch.randn(1, 6, 16)
        boxes = torch.rand(1, 6, 4)
        pad_mask = torch.zeros(1, 1, 6, 6, dtype=torch.bool)
        pad_mask[..., -1] = True
        loss = F.l1_loss(head(layer(queries, boxes, pad_mask)).sigmoid(), torch.rand(1, 6, 4))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
