"""An issue on DualGCN for aspect-based sentiment analysis (the BERT variant):
training fails at `adj_ag /= self.attention_heads` with "Output 0 of
SqueezeBackward1 is a view and is being modified inplace.  This view is the
output of a function that returns multiple views."  Re-created as the
model's graph-convolution module: multi-head attention scores are split per
head with `torch.split`, each piece squeezed, and the adjacency matrix is the
average of the heads, accumulated into the first head's piece and then
divided in place; a GCN layer and a classifier follow, with a small training
loop.  Raises in the forward, at the first in-place write into the head's
view (the accumulation over heads, then the division, both write it).
Buggy lines: `adj_ag += attn_adj_list[i]` and `adj_ag /= self.attention_heads`.
Source: https://github.com/CCChenhao997/DualGCN-ABSA/issues/4"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, heads, dim):
        super().__init__()
        self.heads = heads
        self.d_k = dim // heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, self.d_k).transpose(1, 2)
        k = self.k(x).view(b, n, self.heads, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / self.d_k ** 0.5
        scores = scores.masked_fill(mask[:, None, None, :] == 0, -1e9)
        return F.softmax(scores, dim=-1)


class GCNAbsaModel(nn.Module):
    def __init__(self, dim=16, attention_heads=2, classes=3):
        super().__init__()
        self.attention_heads = attention_heads
        self.attn = MultiHeadAttention(attention_heads, dim)
        self.W = nn.Linear(dim, dim)
        self.classifier = nn.Linear(dim, classes)

    def forward(self, embs, mask, aspect_mask):
        attn_tensor = self.attn(embs, mask)
        attn_adj_list = [attn_adj.squeeze(1) for attn_adj in torch.split(attn_tensor, 1, dim=1)]
        adj_ag = None
        for i in range(self.attention_heads):
            if adj_ag is None:
                adj_ag = attn_adj_list[i]
            else:
                adj_ag += attn_adj_list[i]  # missed: ADL015
        adj_ag /= self.attention_heads  # missed: ADL015
        h = F.relu(self.W(adj_ag @ embs))
        pooled = (h * aspect_mask.unsqueeze(-1)).sum(1) / aspect_mask.sum(1, keepdim=True)
        return self.classifier(pooled)


def run():
    torch.manual_seed(0)
    model = GCNAbsaModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        embs = torch.randn(4, 6, 16)
        mask = torch.ones(4, 6)
        aspect_mask = torch.zeros(4, 6)
        aspect_mask[:, 2] = 1
        logits = model(embs, mask, aspect_mask)
        loss = F.cross_entropy(logits, torch.randint(0, 3, (4,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
