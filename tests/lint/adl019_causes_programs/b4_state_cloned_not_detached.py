"""A word model that copies its carried LSTM state before using it
(`self.hidden = tuple(h.clone() for h in self.hidden)`), taking the copy for a
cut: `clone()` keeps the graph, so the second batch's backward reaches the
first batch's freed graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CopyingLM(nn.Module):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.hidden = None

    def forward(self, tokens):
        if self.hidden is not None:
            self.hidden = tuple(h.clone() for h in self.hidden)
        out, self.hidden = self.lstm(self.emb(tokens), self.hidden)  # ADL017
        return self.out(out)


def train(model, stream):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for inp, tgt in stream:
        logits = model(inp)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()


def run():
    torch.manual_seed(0)
    data = torch.randint(0, 10, (9, 2))
    train(CopyingLM(), [(data[i:i + 4], data[i + 1:i + 5]) for i in (0, 4)])
