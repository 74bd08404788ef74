"""A sequence tagger whose recurrent cell starts its state at zeros on the first
call and detaches the state the previous call left on every later one
(`else: self.h = self.h.detach()`) before its time loop re-binds it: each batch's
graph starts fresh; correct."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RunningCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = nn.GRUCell(n_in, n_hidden)
        self.n_hidden = n_hidden
        self.h = None

    def forward(self, x):
        if self.h is None:
            self.h = torch.zeros(x.size(1), self.n_hidden)
        else:
            self.h = self.h.detach()
        outs = []
        for t in range(x.size(0)):
            self.h = self.cell(x[t], self.h)
            outs.append(self.h)
        return torch.stack(outs)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = RunningCell(3, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        return self.out(self.rnn(x))


def fit(model, optimizer, batches):
    for x, y in batches:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1))
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = Tagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, optimizer, [(torch.randn(4, 2, 3), torch.randint(0, 2, (4, 2))) for _ in range(3)])
