"""Graph fraud detection: each layer aggregates neighbour messages with learned attention
(`attn @ h`, which saves `h` for backward) and adds a self term activated with an in-place ReLU,
`self.act(h)` with `nn.ReLU(inplace=True)`, which overwrites that saved `h`.
Source: https://github.com/yujianke100/GFDN/issues/4 ("Inplace operation Error when backwarding";
maintainer: replace all the ReLUs in GNN.py with `torch.where(x > 0, x, torch.tensor(0.0))`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttentionLayer(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.lin = nn.Linear(dim_in, dim_out)
        self.att = nn.Linear(2 * dim_out, 1)
        self.act = lambda x: torch.where(x > 0, x, torch.tensor(0.0))

    def forward(self, x, adj):
        h = self.lin(x)
        n = h.shape[0]
        pairs = torch.cat([h.unsqueeze(1).expand(n, n, -1), h.unsqueeze(0).expand(n, n, -1)], -1)
        scores = self.att(pairs).squeeze(-1).masked_fill(adj == 0, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = attn @ h
        return out + self.act(h)


class FraudGNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = AttentionLayer(10, 16)
        self.layer2 = AttentionLayer(16, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, x, adj):
        return self.head(self.layer2(self.layer1(x, adj), adj))


adj = ((torch.rand(12, 12) > 0.6).float() + torch.eye(12)).clamp(max=1)
x, y = torch.randn(12, 10), torch.randint(0, 2, (12,))
model = FraudGNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(3):
    loss = F.cross_entropy(model(x, adj), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
