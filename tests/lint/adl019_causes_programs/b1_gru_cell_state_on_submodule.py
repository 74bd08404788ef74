"""A character model whose recurrent cell keeps its state on the module across
calls (`self.h = self.cell(x[t], self.h)`); the training function never
resets it, so the second batch's backward reaches the first batch's freed graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = nn.GRUCell(n_in, n_hidden)
        self.h = None

    def forward(self, x):
        outs = []
        for t in range(x.size(0)):
            self.h = self.cell(x[t], self.h)
            outs.append(self.h)
        return torch.stack(outs)


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = StatefulCell(3, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        return self.out(self.rnn(x))


def fit(model, optimizer, batches):
    for x, y in batches:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1))
        loss.backward()  # ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = CharModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, optimizer, [(torch.randn(4, 2, 3), torch.randint(0, 2, (4, 2))) for _ in range(2)])
