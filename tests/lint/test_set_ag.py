"""Set AG's false findings (docs/lint.md, "A thirty-fifth held-out check: set AG"): the
cause of six of its nine false lines, now a link ADL028 needs evidence for.

- ADL028, "graph": ConvLab-2's latent clustering engine sums six statistics that its
  `train_batch` returns beside `loss.item()`: `loss, (entropy, max_prob, ...) =
  self.train_batch(batch)`, where `stats` was one position of `self.model(...)`'s result, a
  module of unknown class.  A position of a module's result bound to a name may be a tensor
  with a graph, but when that name is unpacked in turn it is a container whose contents
  nothing shows (the model built them with `.item()`): its parts carry no graph now
  (src/autograd_doctor/lint/returned_graphs.py, ``Value.part``).  A position used as a tensor
  (`total += p.sum()`) and the structure written at the call (`out, (h, c) = self.lstm(x)`)
  are still found.
"""

from __future__ import annotations

import sys

import torch
import torch.nn as nn

from autograd_doctor.lint.engine import Selection, lint_source

NESTED_PART = '''
import torch
import torch.nn.functional as F


class Runner:
    def __init__(self, net, lr):
        self.net = net
        self.optim = torch.optim.SGD(self.net.parameters(), lr=lr)

    def fit_batch(self, x, y):
        pred, counts = self.net(x)
        loss = F.mse_loss(pred, y)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.item(), counts

    def fit(self, batches):
        seen, hits = 0, 0
        for x, y in batches:
            _, (n_seen, n_hit) = self.fit_batch(x, y)
            seen += n_seen
            hits += n_hit
        return seen, hits
'''

LATER_UNPACK = '''
import torch


class Loop:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(self.model.parameters())

    def one(self, batch):
        loss, report = self.model(batch)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return report

    def run(self, data):
        total_a = 0.0
        for batch in data:
            report = self.one(batch)
            acc, width = report
            total_a += acc
        return total_a
'''

PART_AS_TENSOR = '''
import torch
import torch.nn.functional as F


class Runner:
    def __init__(self, net, lr):
        self.net = net
        self.optim = torch.optim.SGD(self.net.parameters(), lr=lr)

    def fit_batch(self, x, y):
        pred, extra = self.net(x)
        loss = F.mse_loss(pred, y)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.item(), pred

    def fit(self, batches):
        total = 0
        for x, y in batches:
            _, p = self.fit_batch(x, y)
            total += p.sum()
        return total
'''

LSTM_STATE = '''
import torch
import torch.nn as nn


class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def step(self, x):
        out, (h, c) = self.lstm(x)
        loss = out.pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item(), h

    def train_all(self, xs):
        keep = []
        for x in xs:
            _, h = self.step(x)
            keep.append(h)
        return keep
'''


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


class CountingNet(nn.Module):
    """A model returning its prediction and statistics made with `.item()`, as ConvLab-2's."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        pred = self.lin(x)
        return pred, (float(x.size(0)), (pred > 0).sum().item())


class ReportNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, batch):
        out = self.lin(batch)
        return out.pow(2).mean(), (out.mean().item(), out.size(0))


class PairNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        pred = self.lin(x)
        return pred, pred.detach()


def batches(n=3):
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(n)]


def test_parts_of_a_returned_statistics_tuple_are_silent_and_are_floats():
    assert found(NESTED_PART, "ADL028") == []
    runner = load(NESTED_PART, "set_ag_nested").Runner(CountingNet(), 0.1)
    seen, hits = runner.fit(batches())
    assert isinstance(seen, float) and isinstance(hits, int)  # nothing kept a graph
    assert seen == 12.0


def test_a_part_unpacked_later_is_silent_and_is_a_float():
    assert found(LATER_UNPACK, "ADL028") == []
    loop = load(LATER_UNPACK, "set_ag_later").Loop(ReportNet())
    total = loop.run([x for x, _ in batches()])
    assert isinstance(total, float)


def test_a_part_used_as_a_tensor_is_still_found_and_keeps_the_graph():
    assert found(PART_AS_TENSOR, "ADL028") == [line_of(PART_AS_TENSOR, "total += p.sum()")]
    runner = load(PART_AS_TENSOR, "set_ag_part_tensor").Runner(PairNet(), 0.1)
    total = runner.fit(batches())
    assert total.grad_fn is not None  # every iteration's graph is reachable from the sum
    fixed = load(PART_AS_TENSOR.replace("total += p.sum()", "total += p.sum().item()"), "set_ag_fixed")
    assert isinstance(fixed.Runner(PairNet(), 0.1).fit(batches()), float)


def test_an_lstm_state_unpacked_at_the_call_is_still_found_and_keeps_the_graph():
    assert found(LSTM_STATE, "ADL028") == [line_of(LSTM_STATE, "keep.append(h)")]
    torch.manual_seed(0)
    enc = load(LSTM_STATE, "set_ag_lstm").Enc()
    kept = enc.train_all([torch.randn(2, 1, 4) for _ in range(3)])
    assert all(h.grad_fn is not None for h in kept)
