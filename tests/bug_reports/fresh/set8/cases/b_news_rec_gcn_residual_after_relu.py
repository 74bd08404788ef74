"""News recommendation (NNR): a GCN layer over the graph of a user's clicked news ends with
`out = F.relu(out)` and, with residual connections on, `out += feature`. ReLU saved its output for
its backward; the residual add writes into that output in place, and backward fails (PyTorch >=
1.10 checks it).
Source: https://github.com/Veason-silverbullet/NNR/issues/3 ("one of the variables needed for
gradient computation has been modified by an inplace operation" on torch 1.10; the authors'
answer: change `out += feature` to `out = out + feature`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
BATCH, HISTORY, CANDIDATES, DIM = 4, 5, 3, 8


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, residual=False):
        super().__init__()
        self.residual = residual
        self.W = nn.Linear(in_features=in_dim, out_features=out_dim, bias=True)

    def forward(self, feature, graph):
        out = self.W(torch.bmm(graph, feature))
        out = F.relu(out)
        if self.residual:
            out += feature
        return out


class NewsRecommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.news_encoder = nn.Linear(12, DIM)
        self.gcn = GCNLayer(DIM, DIM, residual=True)
        self.attention = nn.Linear(DIM, 1)

    def forward(self, history_news, graph, candidate_news):
        history = self.gcn(self.news_encoder(history_news), graph)
        weights = F.softmax(self.attention(torch.tanh(history)).squeeze(2), dim=1)
        user = torch.bmm(weights.unsqueeze(1), history).squeeze(1)
        candidates = self.news_encoder(candidate_news)
        return torch.bmm(candidates, user.unsqueeze(2)).squeeze(2)


model = NewsRecommender()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
graph = torch.softmax(torch.randn(BATCH, HISTORY, HISTORY), dim=2)
losses = []
for step in range(3):
    history_news = torch.randn(BATCH, HISTORY, 12)
    candidate_news = torch.randn(BATCH, CANDIDATES, 12)
    clicked = torch.zeros(BATCH, dtype=torch.long)
    loss = F.cross_entropy(model(history_news, graph, candidate_news), clicked)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
