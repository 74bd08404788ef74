"""No claim: `fit` is called twice, once with an optimizer over the network it is
given and once with an optimizer over another module; which module the step
updates is not one fact of the file, so ADL003 says nothing (the first call alone
would be the wrong program of bad_language_model_fit_carries_hidden.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WordLM(nn.Module):
    def __init__(self, vocab=11, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, hidden):
        h, hidden = self.rnn(self.embed(tokens), hidden)
        return self.out(h), hidden


def fit(net, optimizer, batches, hidden):
    for tokens, targets in batches:
        logits, hidden = net(tokens, hidden)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()


def main():
    lm = WordLM()
    probe = nn.Linear(6, 6)
    batches = [(torch.randint(0, 11, (2, 5)), torch.randint(0, 11, (2, 5)))]
    fit(lm, torch.optim.SGD(lm.parameters(), lr=0.1), batches, torch.zeros(1, 2, 6))
    fit(lm, torch.optim.SGD(probe.parameters(), lr=0.1), batches, torch.zeros(1, 2, 6))
