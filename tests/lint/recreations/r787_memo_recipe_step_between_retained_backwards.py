"""hughplay/memo, `code/snippet/pytorch.py`: a kept recipe for "Backward through the graph a
second time" when two objectives share one forward pass: `y = model(x)`, `out_1 = f(y)`,
`out_1.backward(retain_graph=True)`, `opt_1.step()`, then `out_2 = g(y)`, `out_2.backward()`,
`opt_2.step()`.  `retain_graph=True` keeps the buffers, but when `opt_1` updates the shared model
(as it does in a multi-task set-up whose first optimizer owns the trunk), the step writes the
trunk's weights in place between the two backward passes, and `out_2.backward()` needs the
weights the trunk saved for `y`.
Re-created in my own words as the recipe is used: a shared trunk with two task heads, `opt_1`
over the trunk and the first head, `opt_2` over the second head, and the training step written as
the memo writes it.
Raises at `out_2.backward()` ("one of the variables needed for gradient computation has been
modified by an inplace operation").
Source: https://github.com/hughplay/memo/blob/9cd8cd89977d7d21d4ff530031f8eeef9674cab1/code/snippet/pytorch.py"""
import torch
import torch.nn as nn


class Trunk(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8))

    def forward(self, x):
        return self.layers(x)


class Head(nn.Module):
    def __init__(self, out_features):
        super().__init__()
        self.fc = nn.Linear(8, out_features)

    def forward(self, y):
        return self.fc(torch.tanh(y)).pow(2).mean()


def run():
    torch.manual_seed(0)
    model = Trunk()
    f = Head(3)
    g = Head(2)
    opt_1 = torch.optim.SGD(list(model.parameters()) + list(f.parameters()), lr=0.1)
    opt_2 = torch.optim.SGD(g.parameters(), lr=0.1)
    x = torch.randn(4, 6)

    y = model(x)
    model.zero_grad()
    out_1 = f(y)
    out_1.backward(retain_graph=True)
    opt_1.step()  # expect: ADL003
    model.zero_grad()
    out_2 = g(y)
    out_2.backward()
    opt_2.step()
