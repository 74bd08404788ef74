"""A second fresh shape of cause 2 of r736: a hand-written GRU cell splits its input projection
with `torch.split`, names one gate again (`candidate = n_x`), and adds the recurrent part in place
through the new name; raises at `candidate += r * n_h` ("... output of a function that returns
multiple views ...")."""
import torch
import torch.nn as nn


class GRUCell(nn.Module):
    def __init__(self, size, hidden):
        super().__init__()
        self.hidden = hidden
        self.x2h = nn.Linear(size, 3 * hidden)
        self.h2h = nn.Linear(hidden, 3 * hidden)

    def forward(self, x, h):
        r_x, z_x, n_x = torch.split(self.x2h(x), self.hidden, dim=1)
        r_h, z_h, n_h = torch.split(self.h2h(h), self.hidden, dim=1)
        r = torch.sigmoid(r_x + r_h)
        z = torch.sigmoid(z_x + z_h)
        candidate = n_x
        candidate += r * n_h
        return (1 - z) * torch.tanh(candidate) + z * h


def run():
    torch.manual_seed(0)
    cell = GRUCell(3, 4)
    h = torch.zeros(2, 4)
    for x in torch.randn(3, 2, 3):
        h = cell(x, h)
    h.sum().backward()
