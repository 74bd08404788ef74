"""NeuroTorch trains a `SequentialRNN` with truncated backpropagation
through time: after each chunk of time steps it backpropagates, steps, and
carries the layers' hidden states into the next chunk.  With several
layers only the output layer's state was cut from the graph; the first
layer's state still led into the previous chunk, whose graph the last
backward had freed, so the next backward failed ("Trying to backward
through the graph a second time").  The fix detaches every layer's state
after each call.
Buggy line: `loss.backward()` in `train_tbptt` on the second chunk (the
state of layer 0 carries the first chunk's graph).
Expected finding: ADL019 (a backward through a graph an earlier backward
freed).
Source: https://github.com/NeuroTorch/NeuroTorch/issues/134"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentLayer(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.n_out = n_out
        self.fc_in = nn.Linear(n_in, n_out)
        self.fc_rec = nn.Linear(n_out, n_out, bias=False)

    def forward(self, x, h):
        return torch.tanh(self.fc_in(x) + self.fc_rec(h))


class SequentialRNN(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([RecurrentLayer(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def init_states(self, batch_size):
        return [torch.zeros(batch_size, layer.n_out) for layer in self.layers]

    def forward(self, x_t, states):
        new_states = []
        h = x_t
        for layer, state in zip(self.layers, states):
            h = layer(h, state)
            new_states.append(h)
        return h, new_states


def train_tbptt(model, optimizer, inputs, targets, chunk=2):
    states = model.init_states(inputs.shape[1])
    for start in range(0, inputs.shape[0], chunk):
        loss = 0.0
        for t in range(start, start + chunk):
            out, states = model(inputs[t], states)
            loss = loss + F.mse_loss(out, targets[t])
        optimizer.zero_grad()
        loss.backward()  # expect: ADL019
        optimizer.step()
        states[-1] = states[-1].detach()


def run():
    torch.manual_seed(0)
    model = SequentialRNN([3, 4, 2])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_tbptt(model, optimizer, torch.randn(4, 2, 3), torch.randn(4, 2, 2))
