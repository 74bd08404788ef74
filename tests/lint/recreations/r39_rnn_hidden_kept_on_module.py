"""A character RNN keeps its hidden state on the module between calls
(`out, self.hidden = self.rnn(x, self.hidden)`) without detaching it; the
second epoch's backward() goes back into the first epoch's freed graph.
Source: https://github.com/gabrielloye/RNN-walkthrough/issues/3"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, output_size, hidden_dim, n_layers):
        super(Model, self).__init__()
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.rnn = nn.RNN(input_size, hidden_dim, n_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_size)
        self.hidden = None

    def forward(self, x):
        batch_size = x.size(0)
        if self.hidden is None:
            self.hidden = self.init_hidden(batch_size)
        out, self.hidden = self.rnn(x, self.hidden)  # expect: ADL017
        out = out.contiguous().view(-1, self.hidden_dim)
        out = self.fc(out)
        return out, self.hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_dim)


def train(model, input_seq, target_seq, n_epochs=3, lr=0.01):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(1, n_epochs + 1):
        optimizer.zero_grad()
        output, hidden = model(input_seq)
        loss = criterion(output, target_seq.view(-1).long())
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    dict_size = 6
    input_seq = torch.randn(3, 4, dict_size)
    target_seq = torch.randint(0, dict_size, (3, 4))
    train(Model(dict_size, dict_size, hidden_dim=8, n_layers=1), input_seq, target_seq)
