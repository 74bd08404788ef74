"""News recommendation (NNR): the GCN layer's residual added in place to ReLU's output.
Source: https://github.com/Veason-silverbullet/NNR/issues/3 (`out = out + feature`)."""
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
            out = out + feature
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
