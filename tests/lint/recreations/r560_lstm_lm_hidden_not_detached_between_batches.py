"""A blog post on using `detach` for hidden states in PyTorch: with RNNs and
LSTMs "the hidden state at each time step depends on the previous hidden
state"; across batches the hidden state has to be detached (truncated
backpropagation through time), otherwise the next backward runs into the
previous batch's graph, which its backward already freed.  Re-created as a
word-level LSTM language model trained over consecutive chunks of one long
sequence, the hidden state passed from chunk to chunk without `detach()`.
Raises at the second chunk ("Trying to backward through the graph a second
time").
Buggy line: `output, hidden = model(inputs, hidden)` (the hidden state from
the previous chunk, never detached).
Source: https://www.codegenes.net/blog/how-to-use-detach-in-hidden-state-loss-backward-pytorch"""
import torch
import torch.nn as nn


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def init_hidden(self, batch):
        h = torch.zeros(1, batch, self.lstm.hidden_size)
        return (h, h.clone())

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embed(x), hidden)
        return self.decoder(out), hidden


def train_epoch(model, optimizer, chunks, batch=2):
    criterion = nn.CrossEntropyLoss()
    hidden = model.init_hidden(batch)
    for inputs, targets in chunks:
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output.reshape(-1, output.shape[-1]), targets.reshape(-1))
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = LSTMLanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randint(0, 20, (2, 13))
    chunks = [(data[:, i:i + 4], data[:, i + 1:i + 5]) for i in range(0, 12, 4)]
    train_epoch(model, optimizer, chunks)
