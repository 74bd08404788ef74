"""Fresh: a hook on `model.encoder`, whose output forward() then adds the
skip connection to in place."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.skip = nn.Linear(4, 4)

    def forward(self, x):
        h = self.encoder(x)
        h += self.skip(x)  # expect: ADL025
        return h.sum()


def run():
    model = Net()
    grads = {}
    model.encoder.register_full_backward_hook(lambda m, gi, go: grads.update(out=go[0]))
    model(torch.rand(3, 4)).backward()
