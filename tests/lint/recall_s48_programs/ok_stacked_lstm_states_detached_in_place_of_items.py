"""A second near twin: truncated backpropagation through time, the state list's items are cut
from the previous call's graph at the start of every forward (`self.h[i] = self.h[i].detach()`),
so each batch's graph starts fresh."""
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
        for i in range(len(self.cells)):
            self.h[i] = self.h[i].detach()
            self.c[i] = self.c[i].detach()
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
    return [p.detach().clone() for p in model.parameters()]
