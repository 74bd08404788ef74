"""A pointer-generator text summarizer keeps the encoder's hidden state on
the model: it is made once in `__init__` and every `forward` feeds it to
the encoder and stores the new one, `encoder_output, self.hidden =
self.encoder(embedded, self.hidden)`.  The stored state carries the graph of
the previous batch, which that batch's `backward()` already freed; the
second batch's backward goes back into it and fails ("Trying to backward
through the graph a second time").  The fix initialises the hidden state
for each batch.
Buggy line: `encoder_output, self.hidden = self.encoder(embedded, self.hidden)`
in `Seq2Seq.forward`.
Expected finding: ADL017 there (a graph tensor kept on the module).
Source: https://github.com/JulesBelveze/text-summarizer/pull/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, emb_dim, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def init_hidden(self, batch_size):
        return torch.zeros(1, batch_size, self.hidden_dim)

    def forward(self, embedded, hidden):
        return self.gru(embedded, hidden)


class Seq2Seq(nn.Module):
    def __init__(self, vocab_size=20, emb_dim=6, hidden_dim=8, batch_size=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.encoder = Encoder(emb_dim, hidden_dim)
        self.decoder = nn.GRU(emb_dim, hidden_dim, batch_first=True)
        self.out = nn.Linear(hidden_dim, vocab_size)
        self.hidden = self.encoder.init_hidden(batch_size)

    def forward(self, story, highlight):
        embedded = self.embedding(story)
        encoder_output, self.hidden = self.encoder(embedded, self.hidden)  # expect: ADL017
        decoded, _ = self.decoder(self.embedding(highlight), self.hidden)
        return self.out(decoded)


def train_epoch(train_iter, criterion, model, optimizer):
    model.train()
    for story, highlight in train_iter:
        batch_loss_train = 0
        optimizer.zero_grad()
        output = model(story, highlight)
        for sequence, target in zip(output, highlight):
            batch_loss_train += criterion(sequence, target)
        batch_loss_train.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = Seq2Seq()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randint(0, 20, (2, 7)), torch.randint(0, 20, (2, 4))) for _ in range(2)]
    train_epoch(batches, nn.CrossEntropyLoss(), model, optimizer)
