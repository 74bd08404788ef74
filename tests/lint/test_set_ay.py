"""Set AY (docs/lint.md, "A fifty-third held-out check: set AY"): the false cause of
its first run fixed here, with the false shape (silent), a second false shape
written before the change ran on it, real shapes of the same rule still found, and
a torch check.  None of the shapes is a copy of the set's code:

- ADL006 in RL-VIG/LibContinual (https://github.com/RL-VIG/LibContinual,
  `core/model/backbone/transformer.py`): a method keeps a snapshot of the previous
  task's block weights with `copy.deepcopy(self.<weights>)`, where `__init__` made
  `self.<weights>` an `nn.Parameter`.  A parameter is a leaf, and `deepcopy` copies
  leaves; the rule took the parameter (which `is_graph` counts as requiring grad)
  for a tensor with a `grad_fn`.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _adl006(source):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == "ADL006"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# The set's form: a parameter of the class deep-copied in a method that then
# re-binds it to a fresh parameter for the next task.
TASK_WEIGHTS = '''
import copy

import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = blocks
        self.mix = nn.Parameter(torch.ones(3, blocks))
        nn.init.uniform_(self.mix, 0.5, 1.5)
        self.kept = []

    def forward(self, x):
        return x * self.mix.sum()

    def next_task(self):
        old = copy.deepcopy(self.mix)
        self.kept.append(old.requires_grad_(False))
        self.mix = nn.Parameter(torch.ones(3, self.blocks))
'''

# Written before the change ran on it: a layer's weight and a prototype parameter
# copied into a list across calls, in a method that also runs a forward.
PROTOTYPES = '''
import copy

import torch
from torch import nn


class ProtoHead(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.head = nn.Linear(dim, classes)
        self.prototypes = nn.Parameter(torch.zeros(classes, dim))
        self.history = []

    def remember(self, x):
        scores = self.head(x) + x @ self.prototypes.t()
        self.history.append(copy.deepcopy(self.prototypes))
        self.history.append(copy.deepcopy(self.head.weight))
        return scores
'''

# Real shapes of the same rule: copies of values computed from the parameters.
COMPUTED = '''
import copy

import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.mix = nn.Parameter(torch.ones(3, blocks))
        self.head = nn.Linear(blocks, 2)

    def snapshot(self, x):
        scaled = copy.deepcopy(self.mix * 2)
        out = copy.deepcopy(self.head(x))
        return scaled, out
'''


def test_adl006_parameter_of_the_class_is_silent():
    assert _adl006(TASK_WEIGHTS) == []


def test_adl006_layer_weight_and_prototype_parameter_are_silent():
    assert _adl006(PROTOTYPES) == []


def test_adl006_values_computed_from_parameters_still_found():
    assert _adl006(COMPUTED) == [_line(COMPUTED, "scaled = copy.deepcopy("), _line(COMPUTED, "out = copy.deepcopy(")]


def _namespace(source):
    namespace = {}
    exec(compile(source, "<set_ay>", "exec"), namespace)
    return namespace


def test_torch_deepcopy_of_a_parameter_works_and_of_a_computed_value_raises():
    mixer = _namespace(TASK_WEIGHTS)["Mixer"](4)
    before = mixer.mix.detach().clone()
    mixer.next_task()
    assert torch.equal(mixer.kept[0], before) and not mixer.kept[0].requires_grad

    head = _namespace(PROTOTYPES)["ProtoHead"](4, 3)
    head.remember(torch.randn(2, 4))
    assert [tuple(t.shape) for t in head.history] == [(3, 4), (3, 4)]

    computed = _namespace(COMPUTED)["Mixer"](4)
    with pytest.raises(RuntimeError, match="graph leaves"):
        computed.snapshot(torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(nn.Linear(4, 2)(torch.randn(1, 4)))
