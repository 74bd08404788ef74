"""SAINT whose row and column attention run their whole slot: LayerNorm, attention, dropout, residual.
Source: https://github.com/OpenTabular/DeepTab/issues/416 (fixed in https://github.com/OpenTabular/DeepTab/pull/436)."""
import torch
import torch.nn as nn

torch.manual_seed(0)

FEATURES, DIM, HEADS, ROWS = 5, 8, 2, 16


class RowColTransformer(nn.Module):
    def __init__(self, dim, nfeats, depth, heads, dropout):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                nn.Sequential(nn.LayerNorm(dim), nn.MultiheadAttention(dim, heads, batch_first=True), nn.Dropout(dropout)),
                nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)),
                nn.Sequential(nn.LayerNorm(dim * nfeats), nn.MultiheadAttention(dim * nfeats, heads, batch_first=True),
                              nn.Dropout(dropout)),
                nn.Sequential(nn.LayerNorm(dim * nfeats), nn.Linear(dim * nfeats, dim * nfeats)),
            ]))

    def forward(self, x):
        b, n, d = x.shape
        for attn1, ff1, attn2, ff2 in self.layers:
            h = attn1[0](x)
            x = attn1[2](attn1[1](h, h, h)[0]) + x
            x = ff1(x) + x
            x = x.reshape(1, b, n * d)
            h = attn2[0](x)
            x = attn2[2](attn2[1](h, h, h)[0]) + x
            x = ff2(x) + x
            x = x.reshape(b, n, d)
        return x


class SAINT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Linear(1, DIM) for _ in range(FEATURES)])
        self.transformer = RowColTransformer(DIM, FEATURES, depth=1, heads=HEADS, dropout=0.1)
        self.head = nn.Linear(DIM * FEATURES, 1)

    def forward(self, x):
        tokens = torch.stack([embed(x[:, i:i + 1]) for i, embed in enumerate(self.embeddings)], dim=1)
        return self.head(self.transformer(tokens).flatten(1))


X = torch.randn(ROWS, FEATURES)
y = X[:, :1] * 2.0 - X[:, 1:2] + 0.1 * torch.randn(ROWS, 1)
model = SAINT()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = torch.mean((model(X) - y) ** 2)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

model.eval()
with torch.no_grad():
    predictions = model(X)
result = {"losses": torch.stack(losses), "predictions": predictions,
          "params": [p.detach().clone() for p in model.parameters()]}
