"""A second fresh shape of cause 1 of r735: a stacked LSTM keeps `self.h` and `self.c` as lists on
the module and rebinds their items by tuple unpacking from each cell's call on them,
`self.h[i], self.c[i] = cell(x, (self.h[i], self.c[i]))`, never cutting them; the second step's
backward runs into the first step's freed graph ("Trying to backward through the graph a second
time")."""
import torch
import torch.nn as nn


class StackedLSTM(nn.Module):
    def __init__(self, size=3, hidden=4, layers=2):
        super().__init__()
        self.cells = nn.ModuleList([nn.LSTMCell(size if i == 0 else hidden, hidden) for i in range(layers)])
        self.h = [torch.zeros(2, hidden) for _ in range(layers)]
        self.c = [torch.zeros(2, hidden) for _ in range(layers)]
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        for i, cell in enumerate(self.cells):
            self.h[i], self.c[i] = cell(x, (self.h[i], self.c[i]))
            x = self.h[i]
        return self.out(x)


def run():
    torch.manual_seed(0)
    model = StackedLSTM()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = model(torch.randn(2, 3)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
