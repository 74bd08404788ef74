"""A spiking network trained with a leaky integrate-and-fire cell keeps the
cell's state between batches, `out, state = self.cell(x, state)`, the way
a simulation carries membrane voltage forward.  The state is the output of
the previous batch's graph; after that batch's `loss.backward()` freed it,
the next batch's backward reaches it again and fails ("Trying to backward
through the graph a second time").  The fix detaches the carried state (or
starts a fresh state per batch).
Buggy line: `loss.backward()` in `train_epoch`, through the `state` carried
from the previous batch.
Expected finding: ADL019 there.
Source: https://github.com/norse/norse/issues/130"""
import torch
import torch.nn as nn


class SurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (v,) = ctx.saved_tensors
        return grad_output / (1 + 10 * v.abs()) ** 2


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, tau_mem=0.9, v_th=0.5):
        super().__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * 0.5)
        self.tau_mem = tau_mem
        self.v_th = v_th

    def forward(self, x, state=None):
        if state is None:
            state = torch.zeros(x.shape[0], self.input_weights.shape[0])
        v = self.tau_mem * state + x @ self.input_weights.t()
        spikes = SurrogateSpike.apply(v - self.v_th)
        v = v - spikes * self.v_th
        return spikes, v


class SpikingClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = LIFCell(12, 6)
        self.readout = nn.Linear(6, 2)

    def forward(self, x, state=None):
        spikes, state = self.cell(x, state)
        return self.readout(spikes), state


def train_epoch(model, optimizer, batches):
    state = None
    for x, y in batches:
        out, state = model(x, state)
        loss = nn.functional.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = SpikingClassifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.ones(4, 12), torch.tensor([0, 1, 0, 1])) for _ in range(3)]
    train_epoch(model, optimizer, batches)
