"""Wrong: a language model's `fit` gets the network and its optimizer from the caller
and carries the GRU's hidden state from batch to batch without detaching it; with
`retain_graph=True` the second backward goes through the first batch's graph, whose
weights the step has changed: raises (ADL003 at `optimizer.step()`)."""
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
    losses = []
    for tokens, targets in batches:
        logits, hidden = net(tokens, hidden)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss.item())
    return losses


def run():
    torch.manual_seed(0)
    lm = WordLM()
    sgd = torch.optim.SGD(lm.parameters(), lr=0.1)
    batches = [(torch.randint(0, 11, (2, 5)), torch.randint(0, 11, (2, 5))) for _ in range(2)]
    return fit(lm, sgd, batches, torch.zeros(1, 2, 6))
