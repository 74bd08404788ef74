"""An LSTM language model trained on consecutive batches: the loop draws the
initial state once per epoch and carries `(h0, c0)` returned by the model
into the next batch without `detach()`.  The first run failed with "Trying to
backward through the graph a second time"; the author added
`loss.backward(retain_graph=True)`, and the next batch's backward then runs
back into the previous batch's graph, whose weights `optimizer.step()` has
changed in place ("[torch.FloatTensor [128, 6]] is at version 2; expected
version 1").  The fix is `h0, c0 = h0.detach(), c0.detach()` per batch.
Source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685"""
import torch
import torch.nn as nn


class LSTMModel(nn.Module):
    def __init__(self, vocab_size=10, embedding_dim=6, hidden_dim=8, num_layers=1):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (hn, cn) = self.lstm(self.embedding(x), (h0, c0))
        return self.fc(out), (hn, cn)


def train(lstm, data_loader, EPOCH=1, num_layers=1, batch_size=2, hidden_dim=8, embedding_dim=6):
    optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    for epoch in range(EPOCH):
        batch_num = 0
        h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
        for batch in data_loader:
            optimizer.zero_grad()
            output, (h0, c0) = lstm(batch[0], h0, c0)
            loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
            loss.backward(retain_graph=True)
            optimizer.step()  # expect: ADL003
            batch_num += 1


def run():
    torch.manual_seed(0)
    data_loader = [(torch.randint(0, 10, (2, 3)), torch.randn(6, 6)) for _ in range(3)]
    train(LSTMModel(), data_loader)
