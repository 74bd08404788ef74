"""torchmodels' recurrent encoders share one `forward` in a base class: the
subclass's `forward_cell` runs `nn.LSTM` (or `nn.GRU`), and the base class
zeroes the padded time steps of the output in place,
`o.masked_fill_(1 - mask.unsqueeze(-1), 0)`.  The LSTM keeps its output for
backward, so training any model with variable-length inputs fails
("output 0 of MkldnnRnnLayer / CudnnRnnBackward0 is at version 1; expected
version 0"); the fix writes `o = o.masked_fill(...)`.
Buggy line: `o.masked_fill_(...)` in `BaseRNNCell.forward` (the output of
the subclass's `forward_cell`).
Expected finding: ADL001 there.
Source: https://github.com/kaniblu/pytorch-models/pull/8"""
import torch
import torch.nn as nn


def sequence_mask(lens, max_len):
    return torch.arange(max_len).unsqueeze(0) < lens.unsqueeze(1)


class AbstractRNNCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super(AbstractRNNCell, self).__init__()
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim

    def forward(self, x, lens=None, h=None):
        raise NotImplementedError()


class BaseRNNCell(AbstractRNNCell):
    def __init__(self, *args, layers=1, dropout=0, **kwargs):
        super(BaseRNNCell, self).__init__(*args, **kwargs)
        self.layers = layers
        self.dropout = dropout

    def forward_cell(self, x, h0):
        raise NotImplementedError()

    def forward(self, x, lens=None, h=None):
        batch_size, max_len, _ = x.size()
        mask = None
        if lens is not None:
            mask = sequence_mask(lens, max_len)
            x = x.masked_fill(~mask.unsqueeze(-1), 0)
        o, c, h = self.forward_cell(x, h)
        if lens is not None:
            o.masked_fill_(~mask.unsqueeze(-1), 0)  # missed: ADL001
        return o, c, h


class LSTMCell(BaseRNNCell):
    name = "lstm-rnn"

    def __init__(self, *args, **kwargs):
        super(LSTMCell, self).__init__(*args, **kwargs)
        self.lstm = nn.LSTM(input_size=self.input_dim, hidden_size=self.hidden_dim,
                            num_layers=self.layers, dropout=self.dropout, batch_first=True)

    def forward_cell(self, x, h0):
        o, c = self.lstm(x, h0)
        h = c[0].permute(1, 0, 2).contiguous()
        return o, c, h[:, -1]


class SentenceClassifier(nn.Module):
    def __init__(self, vocab=10, dim=4, hidden=6, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = LSTMCell(dim, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, tokens, lens):
        o, _, h = self.rnn(self.embed(tokens), lens)
        return self.out(o.sum(1) / lens.unsqueeze(1))


def run():
    torch.manual_seed(0)
    model = SentenceClassifier()
    optimizer = torch.optim.Adam(model.parameters())
    tokens = torch.randint(0, 10, (2, 5))
    lens = torch.tensor([5, 3])
    loss = nn.functional.cross_entropy(model(tokens, lens), torch.tensor([0, 1]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
