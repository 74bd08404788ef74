"""A blog post on pitfalls of LSTM code: in the network's `forward`, the
hidden and cell states returned by `nn.LSTM` were written straight back
onto the module, `(self.h0, self.c0) = _`, so the next batch starts from a
state that belongs to the previous batch's graph; the second
`loss.backward()` fails with "Trying to backward through the graph a second
time".  The post also warns that the suggested `retain_graph=True` only
turns this into a CUDA out-of-memory error.  Re-created as the post's model
(`flat`, `lstm`, `model1`, states kept as attributes) and a plain training
loop over batches.  Raises at the second batch.
Buggy line: `(self.h0, self.c0) = _` (the states kept on the module with
their graph).
Source: https://e-com-net.com/article/1600156146990088192.htm"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_in=6, hidden=8, batch=4):
        super().__init__()
        self.flat = nn.Flatten(start_dim=2)
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.h0 = torch.zeros(1, batch, hidden)
        self.c0 = torch.zeros(1, batch, hidden)
        self.model1 = nn.Sequential(nn.Linear(hidden, 1))

    def forward(self, inp):
        to_in = self.flat(inp)
        f, _ = self.lstm(to_in, (self.h0, self.c0))
        (self.h0, self.c0) = _  # expect: ADL017
        return self.model1(f)


def run():
    torch.manual_seed(0)
    net = Net()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    for _ in range(2):
        x = torch.randn(4, 5, 2, 3)
        y = torch.randn(4, 5, 1)
        optimizer.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()
