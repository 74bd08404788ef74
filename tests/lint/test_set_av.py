"""Set AV (docs/lint.md, "A fiftieth held-out check: set AV"): the false cause of its
first run fixed here, with the false shape (silent), a second false shape written
before the change ran on it, real shapes of the same rule still found, and torch
checks.  None of the shapes is a copy of the set's code:

- ADL001 in monyone/SISR (https://github.com/monyone/SISR, `models/DRRN/model.py`):
  `x = self.input(x)` ends with an in-place ReLU that keeps its output, then
  `for block, unit in zip(self.residual_blocks, self.redisual_units):` re-binds `x`
  before `x = self.output(x)` writes it in place (another in-place ReLU).  A loop
  over a container of the class's own layers was already taken to run at least
  once; a `zip` of two such containers was not, so the re-binding inside it was
  taken as one that may not happen.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, selection=Selection(select=select))
            if f.code != "ADL000"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


# The set's form: a stem whose in-place ReLU keeps its output, then pairs of the class's
# own layer containers walked with `zip`, each pass re-binding `x`, then an in-place
# ReLU on what the last pass made.
PAIRED_STAGES = '''
import torch
from torch import nn


class Recursive(nn.Module):
    def __init__(self, width=4, stages=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, padding=1), nn.ReLU(inplace=True))
        self.entries = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1) for _ in range(stages)])
        self.refiners = nn.ModuleList([nn.Sequential(nn.BatchNorm2d(width), nn.Conv2d(width, width, 3, padding=1))
                                       for _ in range(stages)])
        self.head = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(width, 1, 3, padding=1))

    def forward(self, x):
        x = self.stem(x)
        for entry, refiner in zip(self.entries, self.refiners):
            skip = entry(x)
            x = refiner(skip) + skip
        return self.head(x)
'''

# A second false form, written before the change ran on it: `enumerate(zip(...))` over
# two containers of the class's own layers after a sigmoid that keeps its output, and
# the in-place scaling after the loop.
ENUMERATED_PAIRS = '''
import torch
from torch import nn


class Gated(nn.Module):
    def __init__(self, width=6, depth=3):
        super().__init__()
        self.gate = nn.Linear(width, width)
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.norms = nn.ModuleList([nn.LayerNorm(width) for _ in range(depth)])

    def forward(self, x):
        h = torch.sigmoid(self.gate(x))
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms)):
            h = norm(layer(h)) * (i + 1)
        h.mul_(0.5)
        return h
'''

# Real: the loop over the paired layers does not re-bind the kept value, which is then
# written after it.
UNTOUCHED = '''
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.gate = nn.Linear(width, width)
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.norms = nn.ModuleList([nn.LayerNorm(width) for _ in range(depth)])

    def forward(self, x):
        h = torch.sigmoid(self.gate(x))
        out = 0
        for layer, norm in zip(self.layers, self.norms):
            out = out + norm(layer(h))
        h.mul_(0.5)
        return out + h
'''

# Real: `zip` of the class's layers with a caller's list, which may be empty: the loop
# may not run, and then the kept sigmoid output is the one written.
CALLERS_LIST = '''
import torch
from torch import nn


class Masked(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.gate = nn.Linear(width, width)
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])

    def forward(self, x, masks):
        h = torch.sigmoid(self.gate(x))
        for layer, mask in zip(self.layers, masks):
            h = layer(h) * mask
        h.mul_(0.5)
        return h
'''


def test_paired_own_layers_rebind_before_the_write_is_silent():
    assert [c for c in _found(PAIRED_STAGES) if c[0] == "ADL001"] == []


def test_enumerated_pairs_of_own_layers_is_silent():
    assert [c for c in _found(ENUMERATED_PAIRS) if c[0] == "ADL001"] == []


def test_value_the_paired_loop_leaves_alone_is_still_found():
    assert ("ADL001", _line(UNTOUCHED, "h.mul_(0.5)")) in _found(UNTOUCHED)


def test_zip_with_a_callers_list_is_still_found():
    assert ("ADL001", _line(CALLERS_LIST, "h.mul_(0.5)")) in _found(CALLERS_LIST)


@pytest.mark.parametrize("source, cls, shape", [
    (PAIRED_STAGES, "Recursive", (2, 1, 5, 5)),
    (ENUMERATED_PAIRS, "Gated", (3, 6)),
])
def test_silent_shapes_backpropagate(source, cls, shape):
    torch.manual_seed(0)
    model = _load(source, cls.lower())[cls]()
    model(torch.randn(*shape)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_real_shapes_fail_in_torch():
    torch.manual_seed(0)
    model = _load(UNTOUCHED, "untouched")["Probe"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(torch.randn(3, 6)).sum().backward()
    model = _load(CALLERS_LIST, "callers_list")["Masked"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(torch.randn(3, 6), []).sum().backward()
    model(torch.randn(3, 6), [torch.ones(6), torch.ones(6)]).sum().backward()  # with masks: fine
    assert isinstance(model, nn.Module)
