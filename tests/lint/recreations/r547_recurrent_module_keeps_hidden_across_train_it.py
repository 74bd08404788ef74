"""A forum thread, "RuntimeError: Trying to backward through the graph a second
time, but the buffers have already been freed": the error comes "the second
time I call loss.backward(), in a function where the model's function execute
one step of a recurrent network, which updates its hidden state in the
forward pass" (`train_it(self, x, y)`: `prediction = self(x)`, `loss =
self.loss(prediction, y)`, `loss.backward()`).  The hidden state kept on the
module still carries the previous call's graph, which the first backward
freed.  Re-created as the thread's module: a one-layer recurrent cell whose
`forward` updates `self.hidden`, and a `train_it` method called per sample.
Raises on the second call.
Buggy line: `self.hidden = torch.tanh(...)` (kept with its graph from call to
call; the fix detaches it at the start of `train_it`).
Source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795"""
import torch
import torch.nn as nn


class OneStepRNN(nn.Module):
    def __init__(self, n_in=3, n_hidden=5):
        super().__init__()
        self.i2h = nn.Linear(n_in, n_hidden)
        self.h2h = nn.Linear(n_hidden, n_hidden)
        self.h2o = nn.Linear(n_hidden, 1)
        self.hidden = torch.zeros(1, n_hidden)
        self.loss = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.01)

    def forward(self, x):
        self.hidden = torch.tanh(self.i2h(x) + self.h2h(self.hidden))  # expect: ADL017
        return self.h2o(self.hidden)

    def train_it(self, x, y):
        self.optimizer.zero_grad()
        prediction = self(x)
        loss = self.loss(prediction, y)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    net = OneStepRNN()
    for _ in range(3):
        net.train_it(torch.randn(1, 3), torch.randn(1, 1))
