"""An OpenNMT-py issue: "`torch.no_grad()` is not used in validate().  I think
it should be used"; the maintainers agree it was forgotten in the 0.4 -> 1.0
migration.  Re-created as a small seq2seq `Trainer` with `train` and
`validate`: `validate()` switches the model to `eval()`, runs every
validation batch through the encoder-decoder and the loss, accumulates the
statistics, and switches back to `train()`, all with autograd recording.
Nothing raises; every validation batch builds a full backward graph
(activations kept until the loss goes out of scope) for nothing.
Buggy line: `outputs = self.model(src, tgt[:, :-1])` in `validate` (forward
with gradients on during validation).
Source: https://github.com/OpenNMT/OpenNMT-py/issues/1141"""
import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.generator = nn.Linear(dim, vocab)

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.emb(src))
        out, _ = self.decoder(self.emb(tgt_in), h)
        return self.generator(out)


class Statistics:
    def __init__(self):
        self.loss, self.n_words = 0.0, 0

    def update(self, loss, n_words):
        self.loss += loss
        self.n_words += n_words


class Trainer:
    def __init__(self, model, optim):
        self.model = model
        self.optim = optim
        self.criterion = nn.CrossEntropyLoss(reduction="sum")
        self.seen_graphs = []

    def train(self, train_iter):
        self.model.train()
        for src, tgt in train_iter:
            outputs = self.model(src, tgt[:, :-1])
            loss = self.criterion(outputs.reshape(-1, outputs.size(-1)), tgt[:, 1:].reshape(-1))
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()

    def validate(self, valid_iter):
        self.model.eval()
        stats = Statistics()
        for src, tgt in valid_iter:
            outputs = self.model(src, tgt[:, :-1])  # missed: ADL031
            loss = self.criterion(outputs.reshape(-1, outputs.size(-1)), tgt[:, 1:].reshape(-1))
            self.seen_graphs.append(loss.grad_fn is not None)
            stats.update(loss.item(), tgt[:, 1:].numel())
        self.model.train()
        return stats


def bug_shows():
    """Every validation loss was computed with a backward graph attached."""
    torch.manual_seed(0)
    model = Seq2Seq()
    trainer = Trainer(model, torch.optim.Adam(model.parameters(), lr=1e-3))
    data = [(torch.randint(0, 20, (2, 5)), torch.randint(0, 20, (2, 6))) for _ in range(2)]
    trainer.train(data)
    trainer.validate(data)
    return all(trainer.seen_graphs)
