"""A language model whose forward detaches the carried LSTM state before using
it (`self.hidden = tuple(h.detach() for h in self.hidden)`): each batch's graph
starts fresh; correct."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WordLM(nn.Module):
    def __init__(self, vocab=10, dim=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.hidden = None

    def forward(self, tokens):
        if self.hidden is not None:
            self.hidden = tuple(h.detach() for h in self.hidden)
        out, self.hidden = self.lstm(self.emb(tokens), self.hidden)
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
    train(WordLM(), [(data[i:i + 4], data[i + 1:i + 5]) for i in (0, 4)])
