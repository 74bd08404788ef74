"""A question on a deep-learning summer-school tutorial asks why the
contextualised-embeddings section detaches the LSTM's hidden states at
every training step while initialising each batch from the previous
batch's state; the answer: truncated backpropagation through time, since
without the detach each batch's graph is chained to every earlier one (and,
once the earlier graph is freed by its backward, the next backward fails).
Re-created as that language model's training loop with the detach left
out: `init_hidden` once per epoch, a loop over contiguous batches of a token
stream, `output, hidden = model(x, hidden)`, and backward / step per batch.
Raises "Trying to backward through the graph a second time" at the second
batch.
Buggy line: `output, hidden = model(x, hidden)` (the state of the previous
batch passed in with its graph).
Source: https://github.com/dpressel/dliss-tutorial/issues/1"""
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.proj = nn.Linear(dim, vocab)

    def init_hidden(self, batch_size):
        zeros = torch.zeros(1, batch_size, self.rnn.hidden_size)
        return (zeros, zeros.clone())

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.proj(out), hidden


def batches(stream, batch_size, bptt):
    n = stream.numel() // batch_size
    data = stream[: n * batch_size].view(batch_size, n)
    for i in range(0, n - 1, bptt):
        seq = min(bptt, n - 1 - i)
        yield data[:, i:i + seq], data[:, i + 1:i + 1 + seq]


def train_epoch(model, optimizer, stream, batch_size=2, bptt=5):
    model.train()
    hidden = model.init_hidden(batch_size)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches(stream, batch_size, bptt):
        output, hidden = model(x, hidden)
        loss = loss_fn(output.reshape(-1, output.size(-1)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = LanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    train_epoch(model, optimizer, torch.randint(0, 30, (40,)))
