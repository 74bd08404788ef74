"""A word-level LSTM language model trained by truncated BPTT carries its hidden state from one batch
to the next without detaching it; the second batch's backward runs into the first batch's freed
graph ("Trying to backward through the graph a second time").
Source: https://github.com/quark0/darts/issues/56 (answer: repackage the hidden state, i.e. return
`h.detach()` for each tensor of it, before each batch).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, emb, hid = 12, 6, 8
embedding = nn.Embedding(vocab, emb)
lstm = nn.LSTM(emb, hid)
decoder = nn.Linear(hid, vocab)
params = [*embedding.parameters(), *lstm.parameters(), *decoder.parameters()]
optimizer = torch.optim.SGD(params, lr=0.5)
corpus = torch.randint(0, vocab, (13, 2))
hidden = (torch.zeros(1, 2, hid), torch.zeros(1, 2, hid))
losses = []
for start in range(0, 12, 4):
    inputs, targets = corpus[start:start + 4], corpus[start + 1:start + 5]
    hidden = tuple(h.detach() for h in hidden)
    output, hidden = lstm(embedding(inputs), hidden)
    loss = nn.functional.cross_entropy(decoder(output).view(-1, vocab), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in params]}
